import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { startAgents, type Agents } from '../../src/domain/agents.ts'
import { flowConversations } from '../../src/domain/flows.ts'
import type { Device } from '../../src/domain/devices.ts'
import type { IncomingMessage } from '../../src/ports/transport.ts'
import { silentLogger } from '../../src/logger.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'

/**
 * A text handed over again is answered at most once (docs/decisions.md, docs/scaling.md). The Baileys
 * adapter names a LID sender's phone from the socket's LID mappings "when it knows one"
 * (adapters/transport-baileys/incoming.ts): the same message can come first with only its LID
 * (mapping not known yet) and again, after a crash or on another process, with the phone too. The
 * take was keyed by the contact key (phone when present, else LID), so the two deliveries took
 * different keys and both were answered. It is keyed by the sender's LID first now, as the webhook-id is.
 */
const test = suite("agents: a redelivered text whose sender is named differently is answered once; another contact's text with its id is another")

const [PHONE, LID, MESSAGE_ID] = ['5511988887777', '123456789012345@lid', '3EB0AABBCCDDEEFF0011']
const device = { id: 'dev-1', accountId: 'acc-1', name: 'loja', phone: '5511911112222', agentIds: ['agent-1'] } as Device

test('first with only the LID, again with the phone too (two processes on one store): one reply', async () => {
  const shared = memoryStorage()
  const runs = [agentsOver(shared), agentsOver(shared.connectAgain())]
  const base = { id: MESSAGE_ID, fromMe: false, isGroup: false, timestamp: 1_700_000_000_000, content: { kind: 'text', text: 'oi' } } as const
  runs[0]!.publish(device, { ...base, chat: LID, fromLid: LID, to: device.phone! })
  runs[1]!.publish(device, { ...base, chat: PHONE, from: PHONE, fromLid: LID, to: device.phone! })
  await Promise.all(runs.map(run => run.runner.close()))
  assert.equal(
    runs.flatMap(run => run.sent),
    ['re: oi'],
    'one reply in all',
  )
})

test('the same on one process (a redelivery after the mapping was learned): one reply', async () => {
  const run = agentsOver(memoryStorage())
  const base = { id: MESSAGE_ID, fromMe: false, isGroup: false, timestamp: 1_700_000_000_000, content: { kind: 'text', text: 'oi' } } as const
  run.publish(device, { ...base, chat: LID, fromLid: LID, to: device.phone! })
  run.publish(device, { ...base, chat: PHONE, from: PHONE, fromLid: LID, to: device.phone! })
  await run.runner.close()
  assert.equal(run.sent, ['re: oi'], 'one reply')
})

test("another contact's text with the same id (ids are the sender's to choose) is another message: each answered", async () => {
  const run = agentsOver(memoryStorage())
  const base = { id: MESSAGE_ID, fromMe: false, isGroup: false, timestamp: 1_700_000_000_000, content: { kind: 'text', text: 'oi' } } as const
  run.publish(device, { ...base, chat: LID, fromLid: LID, to: device.phone! })
  run.publish(device, { ...base, chat: '5511977776666', from: '5511977776666', to: device.phone! })
  await run.runner.close()
  assert.equal(run.sent, ['re: oi', 're: oi'], 'a reply to each contact')
})

function agentsOver(storage: ReturnType<typeof memoryStorage>) {
  const sent: string[] = []
  let publish!: (device: Device, message: IncomingMessage) => void
  const runner = startAgents(
    {
      agents: { activeFor: async () => ({ id: 'agent-1', accountId: 'acc-1', deviceId: device.id, name: 'Bot', createdAt: 0 }) } as unknown as Agents,
      flows: flowConversations(storage, new KeyedLock(), 20),
      messaging: { messenger: { perform: async (_device: Device, op: { message: { text: string } }) => void sent.push(op.message.text) } } as any,
      feed: { subscribe: (subscriber: typeof publish) => void (publish = subscriber) } as any,
      devices: { onRemove: () => {}, load: async () => ({}) } as any,
      accounts: { get: async () => ({}), active: () => true } as any,
    },
    { responder: async ({ text }) => (await new Promise(resolve => setTimeout(resolve, 20)), `re: ${text}`), timeoutMs: 5000, historyLimit: 20 },
    silentLogger,
  )
  return { runner, sent, publish: (d: Device, m: IncomingMessage) => publish(d, m) }
}

test.run()
