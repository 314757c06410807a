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
  /** The agent's replies in a window that lasts `ms` from when each process first saw (or started) it, by its monotonic clock (no clocks compared); apart from `turns`. */
  replies?: { token: string; ms: number; count: number }
}

/** A conversation idle this long expires from storage. */
const FLOW_TTL_MS = 30 * 86_400_000

/** Longest text kept per turn (longer texts are cut; the reply sent is not). */
const MAX_TURN_TEXT = 4_000

/** Flow conversations per device and contact (see flowConversations). */
export type FlowConversations = ReturnType<typeof flowConversations>

/** Flow conversations per device and contact (`flow:<deviceId>:<contact>`): the last `limit` turns, expiring after 30 idle days. */
export function flowConversations(storage: Storage, lock: KeyedLock, limit: number) {
  const flows = new Collection<FlowConversation>(storage, lock, 'flow')
  const change = (id: string, next: (c?: FlowConversation) => FlowConversation | undefined) => flows.update(id, next, FLOW_TTL_MS)
  const live = (window?: FlowConversation['replies']) => (window?.token && window.ms - sinceFirstSeen(window) > 0 ? window : undefined)
  const started = (window = { token: uniqueTag(), ms: 60_000, count: 0 }) => (sinceFirstSeen(window), window)
  return {
    /** The contact's turns, oldest first (empty when there is no conversation), and the agent's replies counted in the current window. */
    async history(deviceId: string, contact: string): Promise<{ turns: AgentTurn[]; replies: number }> {
      const found = await flows.get(`${deviceId}:${contact}`)
      return { turns: found?.turns ?? [], replies: live(found?.replies)?.count ?? 0 }
    },
    /** Count one agent reply in the current window (a new one when it is over) unless `max` are counted there: true when counted. One compare-and-set decides, so processes on one store never count past `max` together. */
    async countReply(deviceId: string, contact: string, max: number): Promise<boolean> {
      let counted = false
      await change(`${deviceId}:${contact}`, current => {
        const window = live(current?.replies) ?? started()
        counted = window.count < max
        return counted ? { deviceId, contact, turns: [], ...current, updatedAt: Date.now(), replies: { ...window, count: window.count + 1 } } : undefined
      })
      return counted
    },
    /** Add turns to the contact's conversation, keeping the last `limit` (none for 0); a reply window that is over is dropped. */
    async append(deviceId: string, contact: string, turns: AgentTurn[]): Promise<void> {
      const added = turns.map(turn => ({ ...turn, text: turn.text.slice(0, MAX_TURN_TEXT) }))
      const keep = (c?: FlowConversation) => [...(c?.turns ?? []), ...added].slice(-limit || Infinity)
      await change(`${deviceId}:${contact}`, current => ({ deviceId, contact, turns: keep(current), updatedAt: Date.now(), replies: live(current?.replies) }))
    },
    /** Delete the conversation with one contact; true when there was one. */
    remove: (deviceId: string, contact: string): Promise<boolean> => flows.remove(`${deviceId}:${contact}`),
    /** Delete every conversation of a device; resolves with how many there were. */
    async removeAll(deviceId: string): Promise<number> {
      const ids: string[] = []
      for await (const [id] of flows.withPrefix(`${deviceId}:`)) ids.push(id)
      let removed = 0
      for (const id of ids) if (await flows.remove(id)) removed++
      return removed
    },
  }
}

/** The key of a contact in flow conversations: phone digits for a number in any spelling, else the lower-case LID; undefined otherwise. */
export function contactKey(address: string): string | undefined {
  const text = `${address ?? ''}`.trim().toLowerCase()
  const lid = /^(\d{1,32})(?::\d+)?@lid$/.exec(text)
  if (lid) return `${lid[1]}@lid`
  const jid = /^(\d{8,15})(?::\d+)?@s\.whatsapp\.net$/.exec(text)
  if (jid) return jid[1]
  const digits = text.replace(/[\s().+-]/g, '')
  return /^\d{8,15}$/.test(digits) ? digits : undefined
}
