import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { waitFor } from '../helpers/gateway.ts'
import { post } from '../helpers/http.ts'
import { inbox } from '../helpers/conformance/world.ts'
import { startRealStack, type RealStack } from '../helpers/real-stack.ts'

/**
 * `POST /_sim/phones` on the local WhatsApp peer gives a phone a LID as the simulator does
 * (docs/simulator.md): a LID names one phone, so one another phone has is refused (400). The peer
 * finds a recipient by number or LID in one table: a LID taken by a second phone, or one that is
 * another phone's number, used to take over that phone's messages.
 */
const lids = suite<RealStack>('LIDs of the phones of the local WhatsApp peer')

const FRIEND = '5511988880002'
const OTHER = '5511977770003'
const THIRD = '5511966660004'

lids.before(async world => {
  Object.assign(world, await startRealStack())
})

lids.after(async world => {
  await world.close?.()
})

lids('a LID another phone has is refused with 400, as on the simulator', async world => {
  const first = await post(`${world.t.url}/_sim/phones`, { phone: FRIEND, lid: '777777777001@lid' })
  assert.equal([first.status, first.body.lid], [200, '777777777001@lid'], first.text)
  const second = await post(`${world.t.url}/_sim/phones`, { phone: OTHER, lid: '777777777001@lid' })
  assert.equal([second.status, second.body.message], [400, '777777777001@lid is the LID of another phone'])
})

lids("a LID that is another phone's number is refused, and the gateway's text to that number still reaches that phone", async world => {
  const { t, authkey } = world
  const taken = await post(`${t.url}/_sim/phones`, { phone: THIRD, lid: `${FRIEND}@lid` })
  assert.equal([taken.status, taken.body.message], [400, `${FRIEND}@lid is the number of another phone`])
  const sent = await t.post('/api/create-message', { appkey: 'loja', authkey, to: FRIEND, message: 'para a amiga' })
  assert.is(sent.status, 200, sent.text)
  await waitFor(async () => (await inbox(t, FRIEND)).some(m => m.id === sent.body.id), 10_000, "the text in FRIEND's inbox")
  assert.equal(await inbox(t, THIRD), [])
})

lids('reading the inbox of a phone the peer never saw creates no phone: that phone can still be given its LID', async world => {
  const NEW = '5511955550005'
  assert.equal(await inbox(world.t, NEW), [])
  const registered = await post(`${world.t.url}/_sim/phones`, { phone: NEW, lid: '777777777005@lid' })
  assert.equal([registered.status, registered.body.lid], [200, '777777777005@lid'], registered.text)
  // A read is no use of the phone: a flood of reads of unknown numbers must not grow the peer's phones.
  const phones = world.peer.phones().length
  for (let n = 0; n < 20; n++) assert.equal(await inbox(world.t, `55119000000${String(n).padStart(2, '0')}`), [])
  assert.is(world.peer.phones().length, phones)
})

lids.run()
