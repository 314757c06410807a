import type { AgentTurn } from '../ports/agents.ts'
import type { Storage } from '../ports/storage.ts'
import { uniqueTag } from '../security/keys.ts'
import { Collection } from '../store/collection.ts'
import type { KeyedLock } from '../store/keyed-lock.ts'
import { sinceFirstSeen } from './claims.ts'

/** A flow conversation: the recent turns between a device's agent and one contact. */
interface FlowConversation {
  deviceId: string
  contact: string
  turns: AgentTurn[]
  updatedAt: number
  /** The answers whose turns were added, the last ANSWERS_KEPT (`append`'s `answer`): the same answer adding them again adds nothing, even after others' answers. */
  answers?: string[]
}

/** The agent's replies to a contact in a window that lasts `ms` from when each process first saw (or started) it, by its monotonic clock (no clocks compared): a record of its own, which deleting the conversation (operation 19) keeps. */
type ReplyWindow = { token: string; ms: number; count: number; answers?: string[] }

/** How many answers' tags a conversation and a reply window keep: a retry of a write that landed (its answer lost) is recognised after this many answers of the contact by other processes. */
const ANSWERS_KEPT = 50

/** `answers` with `answer` added, the last ANSWERS_KEPT. */
const withAnswer = (answers: string[] | undefined, answer: string): string[] => [...(answers ?? []), answer].slice(-ANSWERS_KEPT)

/** How long the store keeps a conversation idle (30 days), a message taken for an answer however often it is handed over again (a day), a reply window (10 minutes: longer than it lasts on any process). */
const [FLOW_TTL_MS, TAKEN_TTL_MS, WINDOW_TTL_MS] = [30 * 86_400_000, 86_400_000, 10 * 60_000]

/** Longest text kept per turn (longer texts are cut; the reply sent is not). */
const MAX_TURN_TEXT = 4_000

/** `text` cut to its first `max` characters, counted as code points as every length of the gateway is (never half an emoji). */
function cut(text: string, max: number): string {
  if (text.length <= max) return text
  let [count, end] = [0, 0]
  for (const char of text) {
    if (count++ === max) break
    end += char.length
  }
  return text.slice(0, end)
}

/** Flow conversations per device and contact (see flowConversations). */
export type FlowConversations = ReturnType<typeof flowConversations>

/** Flow conversations per device and contact (`flow:<deviceId>:<contact>`): the last `limit` turns, expiring after 30 idle days; beside them, the reply windows and the messages taken. */
export function flowConversations(storage: Storage, lock: KeyedLock, limit: number) {
  const flows = new Collection<FlowConversation>(storage, lock, 'flow')
  const [windows, taken] = [new Collection<ReplyWindow>(storage, lock, 'flow-replies'), new Collection<string | true>(storage, lock, 'flow-taken')]
  // The phone of a contact's LID (`flow-lid:<deviceId>:<lid>`), as a text showing both last named it: the LID alone names that phone's conversation (kept 30 days after the last text naming the LID).
  const phones = new Collection<string>(storage, lock, 'flow-lid')
  const live = (window?: ReplyWindow) => (window?.token && window.ms - sinceFirstSeen(window) > 0 ? window : undefined)
  const started = (window = { token: uniqueTag(), ms: 60_000, count: 0 }) => (sinceFirstSeen(window), window)
  return {
    /**
     * The key of the conversation with the sender of a text (`phone`, `lid`: contactKey forms): the phone when the text shows one, else
     * the phone its LID was last shown with, else the LID. A text showing both remembers the pair and moves into the phone's conversation
     * the turns kept under the LID while the number was hidden, so the contact keeps one history (its number may be learned later).
     */
    async conversationOf(deviceId: string, phone: string | undefined, lid: string | undefined): Promise<string | undefined> {
      if (!lid) return phone
      // Each text naming the LID keeps its phone 30 days more, as its conversation is (a compare-and-set: never over a phone shown meanwhile).
      if (!phone) return (await phones.update(`${deviceId}:${lid}`, shown => shown, FLOW_TTL_MS)) ?? lid
      await phones.put(`${deviceId}:${lid}`, phone, FLOW_TTL_MS)
      const hidden = await flows.get(`${deviceId}:${lid}`)
      if (hidden) {
        const merged = (c?: FlowConversation): FlowConversation | undefined =>
          hidden.answers?.every(answer => c?.answers?.includes(answer)) // moved already (a try again after the store failed)
            ? undefined
            : {
                ...{ deviceId, contact: phone, updatedAt: Date.now() },
                // Those moved before (a move whose LID record changed before its delete) are there already: each turn once.
                turns: [...notIn(hidden.turns, c?.turns ?? []), ...(c?.turns ?? [])].sort((a, b) => a.at - b.at).slice(-limit || Infinity),
                answers: [...new Set([...(hidden.answers ?? []), ...(c?.answers ?? [])])].slice(-ANSWERS_KEPT),
              }
        await flows.update(`${deviceId}:${phone}`, merged, FLOW_TTL_MS)
        await flows.removeIfEqual(`${deviceId}:${lid}`, hidden)
      }
      return phone
    },
    /** The contact's turns, oldest first (empty when there is no conversation), and the agent's replies counted in the current window. */
    async history(deviceId: string, contact: string): Promise<{ turns: AgentTurn[]; replies: number }> {
      const [found, window] = await Promise.all([flows.get(`${deviceId}:${contact}`), windows.get(`${deviceId}:${contact}`)])
      return { turns: found?.turns ?? [], replies: live(window)?.count ?? 0 }
    },
    /**
     * Take the message `messageId` that `sender` sent the device for `answer` (a tag unique to one answer): true for its first taker only, in any
     * process on the store (one create-if-absent), so a message handed over again is answered once; true again for the same answer (its take
     * landed though the store did not say so in time, and it asks again). `sender` names the contact as every delivery of the message does: by
     * its LID when it has one (a first delivery may name only the LID, a later one the phone too), as the webhook-id does (outbox-store.ts eventId).
     */
    async take(deviceId: string, sender: string, messageId: string, answer: string): Promise<boolean> {
      const key = `${deviceId}:${sender}:${messageId}`
      return (await taken.create(key, answer, TAKEN_TTL_MS)) || (await taken.get(key)) === answer
    },
    /** Count one agent reply of `answer` in the current window (a new one when it is over) unless `max` are counted there: true when counted (or counted for that answer already). One compare-and-set decides, so processes on one store never count past `max` together. */
    async countReply(deviceId: string, contact: string, max: number, answer: string): Promise<boolean> {
      let counted = false
      const count = (window: ReplyWindow) =>
        window.answers?.includes(answer)
          ? ((counted = true), undefined)
          : (counted = window.count < max)
            ? { ...window, count: window.count + 1, answers: withAnswer(window.answers, answer) }
            : undefined
      // A new window keeps the answers counted in the one before: a count that landed there is not counted (nor refused) again.
      await windows.update(`${deviceId}:${contact}`, current => count(live(current) ?? { ...started(), answers: current?.answers }), WINDOW_TTL_MS)
      return counted
    },
    /** Add the turns of `answer` to the contact's conversation, keeping the last `limit` (none for 0); the same answer's turns are added once. */
    async append(deviceId: string, contact: string, turns: AgentTurn[], answer: string): Promise<void> {
      const added = turns.map(turn => ({ ...turn, text: cut(turn.text, MAX_TURN_TEXT) }))
      const keep = (c?: FlowConversation) => [...(c?.turns ?? []), ...added].slice(-limit || Infinity)
      await flows.update(
        `${deviceId}:${contact}`,
        current =>
          current?.answers?.includes(answer)
            ? undefined
            : { deviceId, contact, turns: keep(current), updatedAt: Date.now(), answers: withAnswer(current?.answers, answer) },
        FLOW_TTL_MS,
      )
    },
    /** Delete the conversation with one contact (a LID: also that of the phone it was last shown with), or without `contact` every conversation of the device (reply windows stay); resolves how many there were. */
    async remove(deviceId: string, contact?: string): Promise<number> {
      if (contact === undefined) return flows.removeWithPrefix(`${deviceId}:`)
      const phone = contact.endsWith('@lid') ? await phones.get(`${deviceId}:${contact}`) : undefined
      const removed = await Promise.all([contact, ...(phone ? [phone] : [])].map(key => flows.remove(`${deviceId}:${key}`)))
      return removed.filter(Boolean).length
    },
    /** Delete everything of a deleted device: conversations, reply windows, taken texts, LIDs' phones (each listed by the device's prefix: a scan of the store). */
    async removeDevice(deviceId: string): Promise<void> {
      for (const records of [flows, windows, taken, phones] as Collection<unknown>[]) await records.removeWithPrefix(`${deviceId}:`)
    },
  }
}

/** `turns` less those `kept` holds (each as often as it holds it). */
function notIn(turns: AgentTurn[], kept: AgentTurn[]): AgentTurn[] {
  const left = kept.map(turn => JSON.stringify([turn.role, turn.text, turn.at]))
  return turns.filter(turn => {
    const at = left.indexOf(JSON.stringify([turn.role, turn.text, turn.at]))
    return at === -1 || (left.splice(at, 1), false)
  })
}

/** The key of a contact in flow conversations: phone digits for a number in any spelling (`…@s.whatsapp.net`, `…@c.us` too), else the lower-case LID; undefined otherwise. */
export function contactKey(address: string): string | undefined {
  const text = `${address ?? ''}`.trim().toLowerCase()
  const lid = /^(\d{1,32})(?::\d+)?@lid$/.exec(text)
  if (lid) return `${lid[1]}@lid`
  const jid = /^(\d{8,15})(?::\d+)?@(?:s\.whatsapp\.net|c\.us)$/.exec(text) // as a `to` of any operation may name it (addresses.ts)
  if (jid) return jid[1]
  const digits = text.replace(/[\s().+-]/g, '')
  return /^\d{8,15}$/.test(digits) ? digits : undefined
}
