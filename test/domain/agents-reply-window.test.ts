import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { waitFor } from '../helpers/gateway.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { startAgents, type Agents } from '../../src/domain/agents.ts'
import { flowConversations } from '../../src/domain/flows.ts'
import type { Device } from '../../src/domain/devices.ts'
import type { Storage } from '../../src/ports/storage.ts'
import { silentLogger } from '../../src/logger.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'

/**
 * The agent's reply limit (10 replies per contact per minute) with the agent logic of two processes
 * on one store: the device fails over from one to the other, whose wall clock is minutes off, or
 * both take a text of the contact at once. What the contact relies on: how many replies were sent.
 */
const test = suite('agents: the per-contact reply limit holds across processes, whatever their clocks')

const CONTACT = '5511988887777'
const device = { id: 'dev-1', accountId: 'acc-1', name: 'loja', phone: '5511911112222', agentIds: ['agent-1'] } as Device

/** One process's agent logic on `storage`: its own locks, flows and runner; `sent` collects the replies it sent. */
function agentProcess(storage: Storage, sent: string[], respond = async ({ text }: { text: string }) => `re: ${text}`) {
  const lock = new KeyedLock()
  const flows = flowConversations(storage, lock, 20)
  let publish!: (device: Device, message: any) => void
  const runner = startAgents(
    {
      agents: { activeFor: async () => ({ id: 'agent-1', accountId: 'acc-1', deviceId: device.id, name: 'Bot', createdAt: 0 }) } as unknown as Agents,
      flows,
      messaging: { messenger: { perform: async (_device: Device, op: any) => void sent.push(op.message.text) } } as any,
      feed: { subscribe: (subscriber: typeof publish) => void (publish = subscriber) } as any,
      devices: { onRemove: () => {}, load: async () => ({}) } as any,
      accounts: { get: async () => ({}), active: () => true } as any,
    },
    { responder: respond, timeoutMs: 5000, historyLimit: 20 },
    silentLogger,
  )
  /** The contact's text reaches this process; resolves once its turn is stored (answered or not). */
  const receive = async (text: string) => {
    const message = { id: `m-${text}`, chat: CONTACT, from: CONTACT, to: device.phone!, fromMe: false, isGroup: false, timestamp: Date.now() }
    publish(device, { ...message, content: { kind: 'text', text } })
    await waitFor(async () => (await flows.history(device.id, CONTACT)).turns.some(turn => turn.text === text), 5000, `the turn "${text}"`)
  }
  return { receive, close: () => runner.close() }
}

/** Run `body` with this process's wall clock (Date.now) moved by `ms`, as on a host whose clock is that far off. */
async function withClockOff<T>(ms: number, body: () => Promise<T>): Promise<T> {
  const realNow = Date.now
  Date.now = () => realNow() + ms
  try {
    return await body()
  } finally {
    Date.now = realNow
  }
}

test('after a failover to a host whose clock is 5 minutes ahead, the contact still gets no more than 10 replies in the minute', async () => {
  const store = memoryStorage()
  const sent: string[] = []
  const [first, second] = [agentProcess(store, sent), agentProcess(store.connectAgain(), sent)]
  for (let i = 0; i < 10; i++) await first.receive(`eco ${i}`)
  assert.is(sent.length, 10)
  await withClockOff(5 * 60_000, async () => {
    for (const text of ['eco 10', 'eco 11', 'eco 12']) await second.receive(text)
  })
  assert.is(sent.length, 10, 'the second process answered past the limit')
  await Promise.all([first.close(), second.close()])
})

test('a host whose clock is 5 minutes behind answers again once the minute is over (it refused for 6 minutes before)', async () => {
  const store = memoryStorage()
  const sent: string[] = []
  const [first, second] = [agentProcess(store, sent), agentProcess(store.connectAgain(), sent)]
  for (let i = 0; i < 10; i++) await first.receive(`eco ${i}`)
  await second.receive('cedo demais')
  assert.is(sent.length, 10)
  // A minute passes on every monotonic clock; the second host's wall clock is 5 minutes behind.
  const realPerformanceNow = performance.now
  performance.now = () => realPerformanceNow.call(performance) + 61_000
  try {
    await withClockOff(61_000 - 5 * 60_000, () => second.receive('um minuto depois'))
  } finally {
    performance.now = realPerformanceNow
  }
  assert.equal(sent.slice(10), ['re: um minuto depois'])
  await Promise.all([first.close(), second.close()])
})

test('two texts of the contact taken at once by two processes, with one reply left in the minute: exactly one is answered', async () => {
  const store = memoryStorage()
  const sent: string[] = []
  // The responder thinks for a moment, so both processes have read the count before either replies.
  const slow = async ({ text }: { text: string }) => (await new Promise(resolve => setTimeout(resolve, 20)), `re: ${text}`)
  const [first, second] = [agentProcess(store, sent, slow), agentProcess(store.connectAgain(), sent, slow)]
  for (let i = 0; i < 9; i++) await first.receive(`eco ${i}`)
  assert.is(sent.length, 9)
  await Promise.all([first.receive('ao mesmo tempo A'), second.receive('ao mesmo tempo B')])
  assert.is(sent.length, 10, `replies sent: ${sent.slice(9).join(', ')}`)
  await Promise.all([first.close(), second.close()])
})

test.run()
