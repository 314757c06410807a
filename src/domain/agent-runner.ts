import type { AgentContact, AgentResponder, AgentTurn } from '../ports/agents.ts'
import { abortable } from './abortable.ts'
import type { IncomingMessage } from '../ports/transport.ts'
import type { Logger } from '../logger.ts'
import { KeyedLock } from '../store/keyed-lock.ts'
import type { Agents } from './agents.ts'
import type { Device, Devices } from './devices.ts'
import { contactKey, type FlowConversations } from './flows.ts'
import type { MessageFeed } from './message-feed.ts'
import type { Messaging } from './messaging/index.ts'

interface AgentRunnerDeps {
  agents: Agents
  flows: FlowConversations
  messaging: Messaging
  feed: MessageFeed
  devices: Devices
}

/** Agent settings after defaults (the options and their defaults: src/options.ts). */
export interface AgentSettings {
  responder?: AgentResponder['respond']
  timeoutMs: number
  historyLimit: number
}

/** Agent replies allowed per contact per minute: two bots answering each other stop here. */
const AGENT_REPLIES_PER_MINUTE = 10

/** Incoming texts waiting for an answer, over all contacts; more are dropped (and logged). */
const MAX_PENDING_TEXTS = 1_000

/**
 * Runs the agents: each incoming 1:1 text on a device with an agent is answered by the responder
 * through the device (the reply reaches the feed as the device's own text), off the feed, one text
 * at a time per contact, with the contact's flow conversation as history.
 */
class AgentRunner {
  private readonly perContact = new KeyedLock()
  private readonly controllers = new Set<AbortController>()
  private readonly running = new Set<Promise<void>>()
  private pending = 0
  private closed = false

  constructor(
    private readonly services: AgentRunnerDeps,
    private readonly settings: AgentSettings,
    private readonly logger: Logger,
  ) {}

  /** Feed subscriber: queue the message for its agent when it is an incoming 1:1 text on a device with agents. */
  readonly consider = (device: Device, message: IncomingMessage): void => {
    if (!this.settings.responder || this.closed || device.agentIds.length === 0) return
    if (message.fromMe || message.isGroup || message.content.kind !== 'text') return
    const contact = contactKey(message.from ?? message.fromLid ?? message.chat)
    if (!contact) return
    if (this.pending >= MAX_PENDING_TEXTS) {
      this.logger.warn({ deviceId: device.id }, 'too many texts waiting for agents; this one is not answered')
      return
    }
    this.pending++
    const run = this.perContact
      .run(`${device.id}:${contact}`, () => this.answer(device, contact, message))
      .catch(err => this.logger.error({ err, deviceId: device.id }, 'agent reply failed'))
      .finally(() => {
        this.pending--
        this.running.delete(run)
      })
    this.running.add(run)
  }

  /** Stop taking texts, abort the responders still thinking, wait for the rest. */
  async close(): Promise<void> {
    this.closed = true
    for (const controller of this.controllers) controller.abort(new Error('the gateway is closing'))
    await Promise.allSettled([...this.running])
  }

  private async answer(device: Device, contact: string, message: IncomingMessage): Promise<void> {
    const { agents, flows } = this.services
    if (this.closed) return
    const agent = await agents.activeFor(device)
    if (!agent || message.content.kind !== 'text') return
    const text = message.content.text
    const history = await flows.history(device.id, contact)
    const turns: AgentTurn[] = [{ role: 'contact', text, at: message.timestamp }]
    const lastMinute = history.filter(turn => turn.role === 'agent' && turn.at > Date.now() - 60_000).length
    if (lastMinute >= AGENT_REPLIES_PER_MINUTE) {
      this.logger.warn({ deviceId: device.id, agentId: agent.id }, 'agent reply limit reached for this contact; not answering')
      return flows.append(device.id, contact, turns)
    }
    const reply = await this.ask(device, agent, contactOf(message), text, history)
    if (reply) {
      await this.services.messaging.messenger.perform(device, { kind: 'send', to: message.chat, message: { kind: 'text', text: reply } })
      turns.push({ role: 'agent', text: reply, at: Date.now() })
    }
    await flows.append(device.id, contact, turns)
  }

  /** The responder's reply, trimmed; undefined when it has none, throws, or takes too long (logged). */
  private async ask(
    device: Device,
    agent: { id: string; name: string },
    contact: AgentContact,
    text: string,
    history: AgentTurn[],
  ): Promise<string | undefined> {
    const controller = new AbortController()
    this.controllers.add(controller)
    const timer = setTimeout(() => controller.abort(new Error(`the agent did not answer within ${this.settings.timeoutMs} ms`)), this.settings.timeoutMs)
    try {
      const request = {
        agent: { id: agent.id, name: agent.name },
        device: { id: device.id, name: device.name, ...(device.phone ? { phone: device.phone } : {}) },
        contact,
        text,
        history,
        signal: controller.signal,
      }
      const reply = await abortable(
        Promise.resolve().then(() => this.settings.responder!(request)),
        controller.signal,
      )
      if (reply === undefined || reply === null) return undefined
      if (typeof reply !== 'string') throw new Error(`the agent answered a ${typeof reply}, not text`)
      return reply.trim() || undefined
    } catch (err) {
      this.logger.warn({ err, deviceId: device.id, agentId: agent.id }, 'agent responder failed; no reply sent')
      return undefined
    } finally {
      clearTimeout(timer)
      this.controllers.delete(controller)
    }
  }
}

/** Build the agent runner and subscribe it to the feed (after the webhook outbox); a deleted device's conversations go with it. */
export function startAgents(services: AgentRunnerDeps, settings: AgentSettings, logger: Logger): AgentRunner {
  const runner = new AgentRunner(services, settings, logger)
  services.feed.subscribe(runner.consider)
  services.devices.onRemove(device => services.flows.removeAll(device.id).then(() => undefined))
  return runner
}

function contactOf(message: IncomingMessage): AgentContact {
  return {
    ...(message.from ? { phone: message.from } : {}),
    ...(message.fromLid ? { lid: message.fromLid } : {}),
    ...(message.pushName ? { name: message.pushName } : {}),
    chat: message.chat,
  }
}
