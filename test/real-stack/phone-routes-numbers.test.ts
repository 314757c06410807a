import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { simulatorServer } from '../../adapters/transport-memory/index.ts'
import { waPeerServer } from '../../adapters/wa-peer/index.ts'
import { post, request } from '../helpers/http.ts'

/**
 * The phone routes take phone numbers as the simulator reads them (docs/simulator.md: "Phones are
 * digit strings"), on the simulator server and on the peer server alike: what is no phone number is
 * refused with 400 and creates no phone. The peer used to keep the digits of whatever came (none
 * for `abc`), made a phone of them, and then took `x` as the address of that phone.
 */
const numbers = suite('phone numbers on the phone routes of the simulator and of the local WhatsApp peer')

const SHOP = '5511999990001'

for (const [name, start] of [
  ['simulator', async () => simulatorServer({ port: 0, host: '127.0.0.1' })],
  ['peer', async () => waPeerServer()],
] as const) {
  numbers(`${name}: no phone number is refused (400) and makes no phone`, async () => {
    const server = await start()
    try {
      const inbox = await request(`${server.url}/_sim/inbox/abc`)
      assert.equal([inbox.status, inbox.body], [400, { status: 400, message: 'not a phone number: abc' }])
      for (const phone of ['(((((', '1234567890123456789012345']) {
        const registered = await post(`${server.url}/_sim/phones`, { phone, pushName: 'Ninguém' })
        assert.equal([registered.status, registered.body.message.endsWith(`not a phone number: ${phone}`)], [400, true], registered.text)
        const sent = await post(`${server.url}/_sim/send`, { from: phone, to: SHOP, type: 'text', text: 'oi' })
        assert.equal([sent.status, sent.body.message.startsWith('from: ')], [400, true], sent.text)
        const mentioned = await post(`${server.url}/_sim/send`, { from: SHOP, to: SHOP, type: 'contact', name: 'Ninguém', phone })
        assert.equal([mentioned.status, mentioned.body.message.endsWith(`not a phone number: ${phone}`)], [400, true], mentioned.text)
      }
      const toNobody = await post(`${server.url}/_sim/send`, { from: SHOP, to: 'x', type: 'text', text: 'oi' })
      assert.is.not(toNobody.status, 200, toNobody.text)
      const ok = await request(`${server.url}/_sim/inbox/${encodeURIComponent('+55 (11) 99999-0001')}`)
      assert.equal([ok.status, ok.body], [200, []])
    } finally {
      await server.close()
    }
  })
}

numbers.run()
