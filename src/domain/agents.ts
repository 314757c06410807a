import { randomUUID } from 'node:crypto'
import { uniqueTag } from '../security/keys.ts'
import { GatewayError } from '../errors.ts'
import type { Logger } from '../logger.ts'
import type { AgentContact, AgentRequest, AgentResponder, AgentTurn } from '../ports/agents.ts'
import type { Storage } from '../ports/storage.ts'
import type { IncomingMessage } from '../ports/transport.ts'
import { Collection } from '../store/collection.ts'
import { KeyedLock } from '../store/keyed-lock.ts'
import { abortable } from './abortable.ts'
import { MAX_TEXT } from './messaging/actions.ts'
import { fitsLength } from '../schema/fields.ts'
import { StorageUnavailableError } from '../store/guarded-storage.ts'
import type { Account, Accounts } from './accounts.ts'
import type { Device, Devices } from './devices.ts'
import { contactKey, type FlowConversations } from './flows.ts'
import type { MessageFeed } from './message-feed.ts'
import type { Messaging } from './messaging/index.ts'

type Agent = { id: string; accountId: string; deviceId: string; name: string; createdAt: number }

/** How many agents one device keeps (the last created answers). */
const MAX_AGENTS_PER_DEVICE = 50

/** Agents of devices (see deviceAgents). */
export type Agents = ReturnType<typeof deviceAgents>

/** Agents: created on a device of the account; the device's newest agent is its active one, answering through startAgents. */
export function deviceAgents(storage: Storage, lock: KeyedLock, devices: Devices) {
  const records = new Collection<Agent>(storage, lock, 'agent')
  return {
    /** Create an agent on the device (which the caller has already found inside `account`). */
    async create(account: Account, device: Device, name: string): Promise<Agent> {
      const agent: Agent = { id: randomUUID(), accountId: account.id, deviceId: device.id, name, createdAt: Date.now() }
      await records.put(agent.id, agent)
      const dropped = await devices.keepLast(device.id, 'agentIds', MAX_AGENTS_PER_DEVICE, agent.id)
      for (const id of dropped) await records.remove(id)
      if (dropped.includes(agent.id)) throw new GatewayError('device-not-found') // deleted meanwhile: its agent is not kept
      return agent
    },
    /** The agent that answers on a device, if any. */
    async activeFor(device: Device): Promise<Agent | undefined> {
      const id = device.agentIds.at(-1)
      return id ? records.get(id) : undefined
    },
    /** Delete the device's agents (removal hook). */
    async removeDevice(device: Device): Promise<void> {
      for (const id of device.agentIds) await records.remove(id)
    },
  }
}

interface AgentRunnerDeps {
  agents: Agents
  flows: FlowConversations
  messaging: Messaging
  feed: MessageFeed
  devices: Devices
  accounts: Accounts
}

/** Agent settings after defaults (the options and their defaults: src/options.ts). */
export interface AgentSettings {
  responder?: AgentResponder['respond']
  timeoutMs: number
  historyLimit: number
}

/** Agent replies allowed per contact per minute (a window each process times by its own monotonic clock: flows.ts): two bots answering each other stop here. */
const AGENT_REPLIES_PER_MINUTE = 10

/** How often an answer is tried again while the store fails under it (after 1, 2, 4, 8 and 16 s: 31 s in all); a store error that does not pass (a broken record) holds the contact's texts no longer. */
const AGENT_RETRIES = 5

/** What an answer has done so far: the agent that took the text, the responder's reply, whether its send was settled and its turns kept. */
interface AnswerProgress {
  /** Unique to this answer: what its store writes are recognised by. */
  tag: string
  agent?: Agent
  /** The key of the contact's flow conversation (flows.conversationOf). */
  conversation?: string
  asked?: { reply: string | undefined; full: boolean; turns: AgentTurn[] }
  sent?: true
  /** The turns are in the contact's conversation. */
  kept?: true
}

/** Incoming texts waiting for an answer, over all contacts and per contact; more are dropped (and logged): one contact's flood never starves the others. */
const [MAX_PENDING_TEXTS, MAX_PENDING_PER_CONTACT] = [1_000, 20]

/** How long a graceful stop lets the texts waiting for an agent be answered; those left are kept in their conversations, unanswered. */
const CLOSE_GRACE_MS = 5_000

/** Start the agents: the responder answers each incoming 1:1 text of a device with an agent, one at a time per contact (in this process: its phone, its LID or both), its flow conversation as history; `close` stops it. */
export function startAgents(services: AgentRunnerDeps, settings: AgentSettings, logger: Logger) {
  const { agents, flows, accounts } = services
  const perContact = new KeyedLock()
  const controllers = new Set<AbortController>()
  const running = new Set<Promise<void>>() // one per text waiting for an answer
  const waiting = new Map<string, number>() // texts waiting per device and contact name, phone or LID (absent: none)
  const sleepers = new Set<() => void>() // answers waiting to try again
  let [closing, closed] = [false, false] // closing: a stop began (answers the store fails give up at once); closed: past its grace (nothing more is asked)

  /** The responder's reply, trimmed; undefined when it has none, throws, or takes too long (logged). */
  const ask = async (request: Omit<AgentRequest, 'signal'>): Promise<string | undefined> => {
    if (!settings.responder) return undefined // no responder: the texts are kept, never answered
    const controller = new AbortController()
    controllers.add(controller)
    const timer = setTimeout(() => controller.abort(new Error(`the agent did not answer within ${settings.timeoutMs} ms`)), settings.timeoutMs)
    try {
      const reply = await abortable(
        Promise.resolve().then(() => settings.responder!({ ...request, signal: controller.signal })),
        controller.signal,
      )
      if (reply !== undefined && reply !== null && typeof reply !== 'string') throw new Error(`the agent answered a ${typeof reply}, not text`)
      const text = reply?.trim()
      // WhatsApp's limit, which the API's `message` keeps (an HTTP responder's answer is held to 64 KiB): never sent past it.
      if (text && !fitsLength(text, MAX_TEXT)) throw new Error(`the agent answered more than ${MAX_TEXT} characters`)
      return text || undefined
    } catch (err) {
      logger.warn({ err, deviceId: request.device.id, agentId: request.agent.id }, 'agent responder failed; no reply sent')
      return undefined
    } finally {
      clearTimeout(timer)
      controllers.delete(controller)
    }
  }

  /** Answer `message` once; `done` records each step taken, so that a try again after the store failed resumes there (never a second question or send). */
  const answer = async (device: Device, contact: string, message: IncomingMessage, done: AnswerProgress): Promise<void> => {
    if (message.content.kind !== 'text') return
    const text = message.content.text
    if (!done.agent) {
      const agent = await agents.activeFor(device)
      if (!agent || !accounts.active(await accounts.get(device.accountId))) return // suspended or expired: no reply
      // Handed over again (to this process or another): at most one answer. The sender by its LID first: a redelivery may name its phone too.
      if (!(await flows.take(device.id, contactKey(message.fromLid ?? message.from ?? message.chat) ?? contact, message.id, done.tag))) return
      done.agent = agent
    }
    const agent = done.agent
    done.conversation ??= (await flows.conversationOf(device.id, ...senderKeys(message))) ?? contact
    const conversation = done.conversation
    // Closed (past the stop's grace) before it was asked: kept in the conversation, unanswered (nothing answers it later).
    if (!done.asked && closed) done.asked = { reply: undefined, full: false, turns: [{ role: 'contact', text, at: message.timestamp }] }
    if (!done.asked) {
      const { turns: history, replies } = await flows.history(device.id, conversation)
      const full = replies >= AGENT_REPLIES_PER_MINUTE // spares the responder; countReply's compare-and-set decides what is sent
      const reply = full
        ? undefined
        : await ask({
            agent: { id: agent.id, name: agent.name },
            device: { id: device.id, name: device.name, ...(device.phone ? { phone: device.phone } : {}) },
            contact: contactOf(message),
            text,
            history,
          })
      done.asked = { reply, full, turns: [{ role: 'contact', text, at: message.timestamp }] }
    }
    const { reply, full, turns } = done.asked
    if (!done.sent) {
      // A store failure counting the reply is tried again (nothing sent yet); a send that fails is not (it is logged, the contact's text kept).
      if (reply && (await flows.countReply(device.id, conversation, AGENT_REPLIES_PER_MINUTE, done.tag))) {
        try {
          await services.messaging.messenger.perform(device, { kind: 'send', to: message.chat, message: { kind: 'text', text: reply } })
          turns.push({ role: 'agent', text: reply, at: Date.now() })
        } catch (err) {
          logger.error({ err, deviceId: device.id, agentId: agent.id }, 'agent reply failed')
        }
      } else if (reply || full) logger.warn({ deviceId: device.id, agentId: agent.id }, 'agent reply limit reached for this contact; not answering')
      done.sent = true
    }
    if (!done.kept) {
      await flows.append(device.id, conversation, turns, done.tag) // the contact's text too when no reply was sent
      done.kept = true
    }
    const stored = await services.devices.load(device.id) // deleted meanwhile (its removal may have listed the flows before these writes): removed here
    if (!stored || stored.removing) await flows.removeDevice(device.id)
  }
  /**
   * Answer, trying again while the store fails under it (AGENT_RETRIES times more, after 1 s, doubling). Each step is done once per
   * answer even when a write the store timed out did land (take, count and append know the answer's tag); a closing gateway stops waiting.
   */
  const answerKept = async (device: Device, contact: string, message: IncomingMessage, conversation?: string): Promise<void> => {
    const done: AnswerProgress = { tag: uniqueTag(), ...(conversation ? { conversation } : {}) }
    for (let retry = 0, delay = 1000; ; retry++, delay *= 2) {
      try {
        return await answer(device, contact, message, done)
      } catch (err) {
        if (!(err instanceof StorageUnavailableError) || retry === AGENT_RETRIES) throw err
        if (closing) return void logger.warn({ err, deviceId: device.id }, 'the gateway is closing and the store failed under an agent answer; not answered')
        logger.warn({ err, deviceId: device.id, retryInMs: delay }, 'the store failed under an agent answer; trying again')
        await pause(delay)
      }
    }
  }
  /** Wait `ms`, or less when the gateway closes. */
  const pause = (ms: number) =>
    new Promise<void>(resolve => {
      const wake = () => (clearTimeout(timer), sleepers.delete(wake), resolve())
      const timer = setTimeout(wake, ms)
      sleepers.add(wake)
    })

  services.feed.subscribe((device, message) => {
    if (closed || device.agentIds.length === 0) return
    if (message.fromMe || message.isGroup || message.content.kind !== 'text') return
    const [phone, lid] = senderKeys(message)
    const contact = phone ?? lid
    if (!contact) return
    // Counted under each name the text shows: a text by the LID alone and one showing the phone and LID (one contact) share the LID's count.
    const keys = [phone, lid].flatMap(name => (name ? [`${device.id}:${name}`] : []))
    if (running.size >= MAX_PENDING_TEXTS || keys.some(key => (waiting.get(key) ?? 0) >= MAX_PENDING_PER_CONTACT))
      return void logger.warn({ deviceId: device.id }, 'too many texts waiting; not answered')
    for (const key of keys) waiting.set(key, (waiting.get(key) ?? 0) + 1)
    const inLine = (name: string, work: () => Promise<void>) => perContact.run(`${device.id}:${name}`, work)
    // One line per contact whatever its texts name: a text naming the LID waits in the LID's line, then in that of the phone it shows or the
    // store knows (conversationOf; a store failure: the LID's line only), a text by phone alone in the phone's. Never the phone's line first: no two wait for each other.
    const answerInLine = async (): Promise<void> => {
      const conversation = phone ?? (await flows.conversationOf(device.id, undefined, lid).catch(() => undefined))
      const work = () => answerKept(device, contact, message, phone ? undefined : conversation)
      return conversation && conversation !== lid ? inLine(conversation, work) : work()
    }
    const run = (lid ? inLine(lid, answerInLine) : inLine(contact, () => answerKept(device, contact, message)))
      .catch(err => logger.error({ err, deviceId: device.id }, 'agent reply failed'))
      .finally(() => {
        for (const key of keys) if (waiting.set(key, waiting.get(key)! - 1).get(key) === 0) waiting.delete(key)
        running.delete(run)
      })
    running.add(run)
  })
  return {
    /** Let the texts waiting be answered for CLOSE_GRACE_MS (new ones too; those the store fails under give up), then stop taking texts, abort the responders still thinking and keep the texts left in their conversations, unanswered. */
    async close(): Promise<void> {
      closing = true
      for (const wake of [...sleepers]) wake() // an answer waiting for the store to try again gives up: a store that failed keeps no turn either
      const graceEnd = Date.now() + CLOSE_GRACE_MS
      while (running.size > 0 && !closed && Date.now() < graceEnd) {
        let timer: NodeJS.Timeout | undefined
        await Promise.race([Promise.allSettled([...running]), new Promise(resolve => (timer = setTimeout(resolve, graceEnd - Date.now())))])
        clearTimeout(timer)
      }
      if (running.size > 0)
        logger.warn({ texts: running.size }, 'the gateway is closing: texts still waiting for an agent are kept in their conversations, unanswered')
      closed = true
      for (const controller of controllers) controller.abort(new Error('the gateway is closing'))
      for (const wake of [...sleepers]) wake()
      await Promise.allSettled([...running])
    },
  }
}

function contactOf({ from: phone, fromLid: lid, pushName: name, chat }: IncomingMessage): AgentContact {
  return { ...(phone ? { phone } : {}), ...(lid ? { lid } : {}), ...(name ? { name } : {}), chat }
}

/** The sender's phone and LID as the text shows them, in contactKey form (the chat of a 1:1 text is the sender). */
function senderKeys({ from, fromLid, chat }: IncomingMessage): [phone: string | undefined, lid: string | undefined] {
  const keys = [from, fromLid, chat].flatMap(address => (address ? (contactKey(address) ?? []) : []))
  return [keys.find(key => !key.endsWith('@lid')), keys.find(key => key.endsWith('@lid'))]
}
