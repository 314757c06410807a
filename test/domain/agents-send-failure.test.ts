import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { waitFor } from '../helpers/gateway.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { startAgents, type Agents } from '../../src/domain/agents.ts'
import { flowConversations } from '../../src/domain/flows.ts'
import type { Device } from '../../src/domain/devices.ts'
import type { AgentRequest } from '../../src/ports/agents.ts'
import { silentLogger } from '../../src/logger.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'

/**
 * A reply the device could not send (it disconnected while the responder thought): the contact's
 * text stays in the flow conversation, as every text not answered does, so the responder still
 * sees it in the history of the contact's next text.
 */

const CONTACT = '5511988887777'
const device = { id: 'dev-1', accountId: 'acc-1', name: 'loja', phone: '5511911112222', agentIds: ['agent-1'] } as Device

test("a reply whose send fails keeps the contact's text in the history the responder gets next", async () => {
  const flows = flowConversations(memoryStorage(), new KeyedLock(), 20)
  const histories: string[][] = []
  let publish!: (device: Device, message: unknown) => void
  const runner = startAgents(
    {
      agents: { activeFor: async () => ({ id: 'agent-1', accountId: 'acc-1', deviceId: device.id, name: 'Bot', createdAt: 0 }) } as unknown as Agents,
      flows,
      messaging: {
        messenger: {
          perform: async (_device: Device, op: { message: { text: string } }) => {
            if (op.message.text === 're: primeiro') throw new Error('the device is not connected')
          },
        },
      } as any,
      feed: { subscribe: (subscriber: typeof publish) => void (publish = subscriber) } as any,
      devices: { onRemove: () => {}, load: async () => ({}) } as any,
      accounts: { get: async () => ({}), active: () => true } as any,
    },
    { responder: ({ text, history }: AgentRequest) => (histories.push(history.map(turn => turn.text)), `re: ${text}`), timeoutMs: 5000, historyLimit: 20 },
    silentLogger,
  )
  const receive = (text: string) =>
    publish(device, { id: `m-${text}`, chat: CONTACT, from: CONTACT, fromMe: false, isGroup: false, timestamp: Date.now(), content: { kind: 'text', text } })
  receive('primeiro')
  receive('segundo')
  await waitFor(async () => (await flows.history(device.id, CONTACT)).turns.some(turn => turn.text === 're: segundo'), 5000, 'the second reply')
  assert.equal(histories, [[], ['primeiro']])
  await runner.close()
})

test.run()
