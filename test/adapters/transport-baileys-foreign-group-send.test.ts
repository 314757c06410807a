import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { baileysTransport } from '../../adapters/transport-baileys/index.ts'
import { FakeBaileys } from '../helpers/fake-baileys/index.ts'
import { connectedBaileysDevice } from '../helpers/baileys-gateway.ts'
import { startGateway } from '../helpers/gateway.ts'

const foreign = suite('Baileys transport behind the HTTP API: a send to a group the device is not in')

const DEVICE_PHONE = '5511999990000'
const BOB = '5511888880000'

foreign('answers 404 Destino não encontrado na rede. (as on the simulated network), not 403 "not admin"', async () => {
  const fake = new FakeBaileys({})
  const transport = baileysTransport({ ...fake.transportOptions(), reconnect: { initialDelayMs: 5, maxDelayMs: 40, jitter: 0 } })
  const t = await startGateway({ transport })
  try {
    const { authkey } = await t.register()
    const device = await connectedBaileysDevice(t, fake, authkey, { phone: DEVICE_PHONE })
    // WhatsApp refuses a group's participant list (`forbidden`, 403) to a non-member; every group send asks for it.
    const group = fake.addGroup({ subject: 'Dos outros', members: [{ phone: BOB, admin: true }] })
    const send = (body: Record<string, unknown>) => t.post('/api/create-message', { appkey: 'loja', authkey, to: group.id, ...body })
    const answers = [await send({ message: 'oi' }), await send({ message: 'Escolha:', buttons: [{ type: 'replyButton', displaytext: 'Sim' }] })]
    for (const answer of answers) assert.equal(answer.body, { status: 404, message: 'Destino não encontrado na rede.' })
    assert.equal(fake.sent(device.id), [])
  } finally {
    await t.stop()
  }
})

foreign.run()
