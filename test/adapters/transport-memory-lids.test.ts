import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { TransportError } from '../../src/ports/transport.ts'
import type { IncomingMessage } from '../../src/ports/transport.ts'
import { simulatorServer } from '../../adapters/transport-memory/index.ts'
import { post } from '../helpers/http.ts'
import { linkAs, memoryHarness } from './memory-harness.ts'
import type { MemoryHarness } from './memory-harness.ts'

const PHONE = '5511999990001'
const FRIEND = '5511988880002'
const OTHER = '5511977770003'
const LID = '123456789012345@lid'

const test = suite('transport-memory: LIDs name one phone')

/** Wait until `count` message events arrived (a device's send reaches the other devices just after it answers). */
async function waitForMessages(h: MemoryHarness, count: number): Promise<void> {
  for (let i = 0; i < 200 && messages(h).length < count; i++) await new Promise(resolve => setTimeout(resolve, 10))
}

const messages = (h: MemoryHarness) => h.events.flatMap(e => (e.type === 'message' ? [e.message as IncomingMessage] : []))

test('a LID another phone already has is refused, and a reply to the LID reaches the phone that showed it', async () => {
  const h = await memoryHarness()
  await linkAs(h, 'd1', PHONE)
  h.network.registerPhone(FRIEND, { lid: LID, hidePhone: true })
  assert.throws(
    () => h.network.registerPhone(OTHER, { lid: LID }),
    (err: unknown) => err instanceof TransportError && err.code === 'invalid',
  )
  h.network.registerPhone(OTHER, { lid: '123456789012399@lid' })
  await h.network.sendFromPhone(FRIEND, PHONE, { type: 'text', text: 'hidden' })
  const [received] = messages(h)
  await h.transport.send('d1', received.chat, { kind: 'text', text: 'reply' })
  assert.deepEqual(
    h.network.inbox(FRIEND).map(e => e.type === 'text' && e.text),
    ['reply'],
  )
  assert.deepEqual(h.network.inbox(OTHER), [])
  await h.close()
})

test('a LID given in another form (upper case, a device suffix) is the same user', async () => {
  const h = await memoryHarness()
  await linkAs(h, 'd1', PHONE)
  assert.equal(h.network.registerPhone(FRIEND, { lid: ' 123456789012345:7@LID', hidePhone: true }), LID)
  await h.network.sendFromPhone(FRIEND, PHONE, { type: 'text', text: 'hidden' })
  const [received] = messages(h)
  assert.deepEqual([received.chat, received.fromLid], [LID, LID])
  await h.transport.send('d1', received.chat, { kind: 'text', text: 'reply' })
  assert.equal(h.network.inbox(FRIEND).length, 1)
  await h.close()
})

test("the account's own messages to a contact who hides the number are in the chat its replies name (its LID), not under its number", async () => {
  const h = await memoryHarness()
  await linkAs(h, 'd1', PHONE)
  await linkAs(h, 'd2', PHONE)
  h.network.registerPhone(FRIEND, { lid: LID, hidePhone: true })
  await h.network.sendFromPhone(FRIEND, PHONE, { type: 'text', text: 'hidden' })
  await h.network.sendFromPhone(PHONE, FRIEND, { type: 'text', text: 'typed on the phone' })
  const sent = await h.transport.send('d2', LID, { kind: 'text', text: 'sent by another device' })
  await waitForMessages(h, 5)
  const seenByD1 = h.events.flatMap(e => (e.type === 'message' && e.deviceId === 'd1' ? [e.message] : []))
  assert.deepEqual(
    seenByD1.map(m => [(m.content as { text: string }).text, m.fromMe, m.chat, m.to]),
    [
      ['hidden', false, LID, PHONE],
      ['typed on the phone', true, LID, LID],
      ['sent by another device', true, LID, LID],
    ],
  )
  assert.equal(sent.chat, LID)
  await h.close()
})

test("the account's own messages (typed on its phone, sent by another of its devices, in a group) carry its LID as fromLid, as the Baileys transport reports them", async () => {
  const h = await memoryHarness()
  await linkAs(h, 'd1', PHONE)
  await linkAs(h, 'd2', PHONE)
  const own = h.network.registerPhone(PHONE, { lid: true })!
  const group = h.network.createGroup(FRIEND, 'Equipe', [PHONE]).id
  await h.network.sendFromPhone(PHONE, FRIEND, { type: 'text', text: 'typed on the phone' })
  await h.transport.send('d2', FRIEND, { kind: 'text', text: 'sent by another device' })
  await h.network.sendFromPhone(PHONE, group, { type: 'text', text: 'in a group' })
  await waitForMessages(h, 5)
  const seenByD1 = h.events.flatMap(e => (e.type === 'message' && e.deviceId === 'd1' ? [e.message] : []))
  assert.deepEqual(
    seenByD1.map(m => [(m.content as { text: string }).text, m.fromMe, m.from, m.fromLid]),
    [
      ['typed on the phone', true, PHONE, own],
      ['sent by another device', true, PHONE, own],
      ['in a group', true, PHONE, own],
    ],
  )
  await h.close()
})

test('POST /_sim/phones answers 400 for a LID another phone has', async () => {
  const sim = await simulatorServer({ port: 0, host: '127.0.0.1' })
  assert.equal((await post(`${sim.url}/_sim/phones`, { phone: FRIEND, lid: LID })).status, 200)
  const taken = await post(`${sim.url}/_sim/phones`, { phone: OTHER, lid: LID })
  assert.equal(taken.status, 400)
  assert.equal(taken.body.status, 400)
  assert.equal((await post(`${sim.url}/_sim/phones`, { phone: FRIEND, lid: LID, pushName: 'Friend' })).status, 200, 'its own LID again')
  await sim.close()
})

test('POST /_sim/phones answers 400 for a lid that is no LID, and the phone keeps the LID it had', async () => {
  const sim = await simulatorServer({ port: 0, host: '127.0.0.1' })
  assert.equal((await post(`${sim.url}/_sim/phones`, { phone: FRIEND, lid: LID, hidePhone: true })).status, 200)
  for (const lid of ['not-a-lid', '1234@lid', OTHER, `${OTHER}@s.whatsapp.net`]) {
    const refused = await post(`${sim.url}/_sim/phones`, { phone: FRIEND, lid, hidePhone: true })
    assert.equal(refused.status, 400, lid)
    assert.match(refused.body.message, /LID/, lid)
  }
  // Members who hide their number show as their LID: FRIEND still does.
  const created = await post(`${sim.url}/_sim/groups`, { creator: OTHER, subject: 'Team', members: [FRIEND] })
  assert.deepEqual(
    created.body.group.participants.map((p: { id: string }) => p.id),
    [`${OTHER}@s.whatsapp.net`, LID],
  )
  assert.equal((await post(`${sim.url}/_sim/phones`, { phone: FRIEND, lid: 'false' }, 'form')).status, 200, "a form's false: no LID")
  await sim.close()
})

test.run()
