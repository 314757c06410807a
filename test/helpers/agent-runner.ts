import { startAgents, type Agents } from '../../src/domain/agents.ts'
import type { FlowConversations } from '../../src/domain/flows.ts'
import type { Device } from '../../src/domain/devices.ts'
import { silentLogger } from '../../src/logger.ts'

/** A device with an agent (agent-1), for the agent runner's tests. */
export const AGENT_DEVICE = { id: 'dev-1', accountId: 'acc-1', name: 'loja', phone: '5511911112222', agentIds: ['agent-1'] } as Device

/** The agent runner over `flows` for AGENT_DEVICE, its responder answering `re: <text>`: what it was asked, what was sent, and `receive`, a text from `contact` (id `m-<text>`). */
export function agentsOver(flows: FlowConversations, contact: string) {
  const asked: string[] = []
  const sent: string[] = []
  let publish!: (device: Device, message: unknown) => void
  const runner = startAgents(
    {
      agents: { activeFor: async () => ({ id: 'agent-1', accountId: 'acc-1', deviceId: AGENT_DEVICE.id, name: 'Bot', createdAt: 0 }) } as unknown as Agents,
      flows,
      messaging: { messenger: { perform: async (_device: Device, op: { message: { text: string } }) => void sent.push(op.message.text) } } as any,
      feed: { subscribe: (subscriber: typeof publish) => void (publish = subscriber) } as any,
      devices: { onRemove: () => {}, load: async () => ({}) } as any,
      accounts: { get: async () => ({}), active: () => true } as any,
    },
    { responder: ({ text }: { text: string }) => (asked.push(text), `re: ${text}`), timeoutMs: 5000, historyLimit: 20 },
    silentLogger,
  )
  const receive = (text: string) =>
    publish(AGENT_DEVICE, {
      id: `m-${text}`,
      chat: contact,
      from: contact,
      fromMe: false,
      isGroup: false,
      timestamp: Date.now(),
      content: { kind: 'text', text },
    })
  return { runner, asked, sent, receive }
}
