/**
 * One gateway process's agent logic for test/domain/agents-redelivery-processes.test.ts: opens the
 * store given in STORE_URL (namespace STORE_NAMESPACE), runs the agents over it with a responder
 * that thinks for a moment, prints `ready`, waits for `go` on stdin, then is handed the contact's
 * text MESSAGE_ID twice (a transport's redelivery) and, once both are dealt with, prints one JSON
 * line: the replies it sent. Not a test by itself.
 */
import { createInterface } from 'node:readline'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { startAgents, type Agents } from '../../src/domain/agents.ts'
import type { Device } from '../../src/domain/devices.ts'
import { flowConversations, type FlowConversations } from '../../src/domain/flows.ts'
import { silentLogger } from '../../src/logger.ts'
import { requireAtomic } from '../../src/ports/storage.ts'
import type { IncomingMessage } from '../../src/ports/transport.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'

const [CONTACT, DEVICE_PHONE] = ['5511988887777', '5511911112222']
const device = { id: 'dev-1', accountId: 'acc-1', name: 'loja', phone: DEVICE_PHONE, agentIds: ['agent-1'] } as Device
const storage = requireAtomic(await storageFromUrl(process.env.STORE_URL!, { namespace: process.env.STORE_NAMESPACE }), 'agent contender')

// Each delivery ends in a stored turn (answered or not), or in a `take` that loses.
const flows = flowConversations(storage, new KeyedLock(), 20)
let settled = 0
let bothSettled!: () => void
const both = new Promise<void>(resolve => (bothSettled = resolve))
const settle = () => ++settled === 2 && bothSettled()
const watched: FlowConversations = {
  ...flows,
  take: async (...args) => (await flows.take(...args)) || (settle(), false),
  append: async (...args) => void (await flows.append(...args), settle()),
}

const sent: string[] = []
let publish!: (device: Device, message: IncomingMessage) => void
const runner = startAgents(
  {
    agents: { activeFor: async () => ({ id: 'agent-1', accountId: 'acc-1', deviceId: device.id, name: 'Bot', createdAt: 0 }) } as unknown as Agents,
    flows: watched,
    messaging: { messenger: { perform: async (_device: Device, op: any) => void sent.push(op.message.text) } } as any,
    feed: { subscribe: (subscriber: typeof publish) => void (publish = subscriber) } as any,
    devices: { onRemove: () => {}, load: async () => ({}) } as any,
    accounts: { get: async () => ({}), active: () => true } as any,
  },
  { responder: async ({ text }) => (await new Promise(resolve => setTimeout(resolve, 50)), `re: ${text}`), timeoutMs: 5000, historyLimit: 20 },
  silentLogger,
)

await storage.get('warm-up')
console.log('ready')
await new Promise<void>(resolve => createInterface({ input: process.stdin }).once('line', () => resolve()))
const message: IncomingMessage = {
  ...{ id: process.env.MESSAGE_ID!, chat: CONTACT, from: CONTACT, to: DEVICE_PHONE, fromMe: false, isGroup: false, timestamp: 1_700_000_000_000 },
  content: { kind: 'text', text: 'quanto custa?' },
}
publish(device, message)
publish(device, structuredClone(message))
await both
await runner.close()
console.log(JSON.stringify({ sent }))
await storage.close!()
