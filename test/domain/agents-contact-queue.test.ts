import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { waitFor } from '../helpers/gateway.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { startAgents, type Agents } from '../../src/domain/agents.ts'
import { flowConversations } from '../../src/domain/flows.ts'
import type { Device } from '../../src/domain/devices.ts'
import type { IncomingMessage } from '../../src/ports/transport.ts'
import { silentLogger } from '../../src/logger.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'

/**
 * An agent answers a contact's texts one at a time, each with the turns of those answered before as
 * its history (docs/decisions.md: "one at a time per contact"; src/domain/agents.ts). A contact may
 * name itself by its LID alone, by its phone alone or by both (WhatsApp's LID addressing), and once
 * a text showed both its texts share one conversation (test/domain/agents-lid-contact.test.ts). The
 * texts were queued under the phone when a text showed one, else under the LID: a text by the LID
 * alone and one showing the phone, of the same contact, were answered at once, the responder asked
 * twice in parallel, each with a history without the other's turns.
 *
 * The responder holds each call until the test releases it; the store is in memory (each of its steps
 * a microtask), so one macrotask turn lets every text that waits behind no other reach the responder.
 */
const test = suite("agents: one contact's texts are answered one at a time, whether they name its LID, its phone or both")

const [PHONE, LID] = ['5511988887777', '123456789012345@lid']
const device = { id: 'dev-1', accountId: 'acc-1', name: 'loja', phone: '5511911112222', agentIds: ['agent-1'] } as Device
type Naming = 'lid' | 'phone' | 'both'

const cases: [first: Naming, second: Naming][] = [
  ['lid', 'both'],
  ['lid', 'phone'],
  ['both', 'lid'],
  ['phone', 'lid'],
  ['phone', 'both'],
  ['both', 'phone'],
]
for (const [first, second] of cases)
  test(`a text by ${first} being answered, then one by ${second}: the second waits and sees the first's turns`, async () => {
    const run = agentsOver()
    await run.answered('oi', 'both') // the LID's phone is known: one conversation
    run.publish('a', first)
    await waitFor(() => run.asked.length === 2, 5000, 'the first text to be asked')
    run.publish('b', second)
    await new Promise(resolve => setImmediate(resolve))
    run.release('a')
    await run.release('b')
    await waitFor(() => run.sent.length === 3, 5000, 'the replies')
    await run.runner.close()
    assert.equal(run.overlapping, [], 'no text asked while another of the contact was')
    assert.equal(run.asked.at(-1), { text: 'b', history: ['oi', 're: oi', 'a', 're: a'] })
  })

test("a contact's first text shows both, a text by its LID alone comes while it is answered: it waits, then resolves to the phone's conversation", async () => {
  const run = agentsOver()
  run.publish('a', 'both')
  await waitFor(() => run.asked.length === 1, 5000, 'the first text to be asked')
  run.publish('b', 'lid')
  await new Promise(resolve => setImmediate(resolve))
  run.release('a')
  await run.release('b')
  await waitFor(() => run.sent.length === 2, 5000, 'the replies')
  await run.runner.close()
  assert.equal(run.overlapping, [], 'no text asked while another of the contact was')
  assert.equal(run.asked.at(-1), { text: 'b', history: ['a', 're: a'] })
})

test("another contact's text is not held back", async () => {
  const run = agentsOver()
  run.publish('a', 'lid')
  await waitFor(() => run.asked.length === 1, 5000, 'the first text to be asked')
  run.publish('b', 'phone', '5511977776666')
  await waitFor(() => run.asked.length === 2, 5000, "the other contact's text to be asked")
  run.release('a')
  run.release('b')
  await run.runner.close()
  assert.equal(run.sent, ['re: a', 're: b'])
})

test('at most 20 texts of one contact wait, whether they name its LID alone or its phone and LID (docs/limits.md: 20 per contact)', async () => {
  const run = agentsOver(false) // no replies: the reply limit (10 a minute) never spares the responder
  run.publish('a', 'both')
  await waitFor(() => run.asked.length === 1, 5000, 'the first text to be asked')
  for (let i = 0; i < 25; i++) (run.publish(`lid ${i}`, 'lid'), run.publish(`both ${i}`, 'both'))
  run.release('a')
  for (let answered = 1; answered < run.asked.length || (await new Promise(resolve => setTimeout(resolve, 50)), answered < run.asked.length); answered++)
    await run.release(run.asked[answered]!.text)
  await run.runner.close()
  assert.is(run.asked.length, 20, `asked: ${run.asked.map(asked => asked.text).join(', ')}`)
})

/** The runner over an in-memory store, its responder held per text until released; it replies `re: <text>` unless `replies` is false. */
function agentsOver(replies = true) {
  const sent: string[] = []
  const asked: { text: string; history: string[] }[] = []
  const overlapping: string[] = []
  const gates = new Map<string, () => void>()
  let [thinking, next] = [0, 0]
  let publish!: (device: Device, message: IncomingMessage) => void
  const runner = startAgents(
    {
      agents: { activeFor: async () => ({ id: 'agent-1', accountId: 'acc-1', deviceId: device.id, name: 'Bot', createdAt: 0 }) } as unknown as Agents,
      flows: flowConversations(memoryStorage(), new KeyedLock(), 20),
      messaging: { messenger: { perform: async (_device: Device, op: { message: { text: string } }) => void sent.push(op.message.text) } } as any,
      feed: { subscribe: (subscriber: typeof publish) => void (publish = subscriber) } as any,
      devices: { onRemove: () => {}, load: async () => ({}) } as any,
      accounts: { get: async () => ({}), active: () => true } as any,
    },
    {
      responder: async ({ text, history }) => {
        if (thinking > 0) overlapping.push(text)
        thinking++
        asked.push({ text, history: history.map(turn => turn.text) })
        await new Promise<void>(resolve => gates.set(text, resolve)).finally(() => thinking--)
        return replies ? `re: ${text}` : undefined
      },
      timeoutMs: 5000,
      historyLimit: 20,
    },
    silentLogger,
  )
  const send = (text: string, naming: Naming, phone = PHONE) => {
    const [byPhone, byLid] = [naming !== 'lid', naming !== 'phone' && phone === PHONE]
    const base = { id: `ID-${++next}`, fromMe: false, isGroup: false, timestamp: 1_700_000_000_000 + next, content: { kind: 'text', text } } as const
    publish(device, { ...base, chat: byPhone ? phone : LID, to: device.phone!, ...(byPhone ? { from: phone } : {}), ...(byLid ? { fromLid: LID } : {}) })
  }
  /** Let the responder's call for `text` answer (once it is asked). */
  const release = async (text: string) => {
    await waitFor(() => gates.has(text), 5000, `the responder to be asked "${text}"`)
    gates.get(text)!()
  }
  return {
    runner,
    sent,
    asked,
    overlapping,
    publish: send,
    release,
    async answered(text: string, naming: Naming) {
      send(text, naming)
      await release(text)
      await waitFor(() => sent.includes(`re: ${text}`), 5000, `the reply to "${text}"`)
      await new Promise(resolve => setImmediate(resolve)) // its turns kept
    },
  }
}

test.run()
