import type { AgentTurn } from '../ports/agents.ts'
import type { Storage } from '../ports/storage.ts'
import { Collection } from '../store/collection.ts'
import type { KeyedLock } from '../store/keyed-lock.ts'

/** A flow conversation: the recent turns between a device's agent and one contact. */
interface FlowConversation {
  deviceId: string
  contact: string
  turns: AgentTurn[]
  updatedAt: number
  replies?: number[] // when the agent replied within the last minute: apart from `turns`, so the reply limit holds whatever `limit` is
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
  const recent = (replies: number[] = []) => replies.filter(at => at > Date.now() - 60_000)
  return {
    /** The contact's turns, oldest first (empty when there is no conversation), and when the agent replied within the last minute. */
    async history(deviceId: string, contact: string): Promise<{ turns: AgentTurn[]; replies: number[] }> {
      const found = await flows.get(`${deviceId}:${contact}`)
      return { turns: found?.turns ?? [], replies: recent(found?.replies) }
    },
    /** Add turns to the contact's conversation, keeping the last `limit` (none for 0), and the agent's replies of the last minute. */
    async append(deviceId: string, contact: string, turns: AgentTurn[]): Promise<void> {
      const added = turns.map(turn => ({ ...turn, text: turn.text.slice(0, MAX_TURN_TEXT) }))
      const replies = added.flatMap(turn => (turn.role === 'agent' ? [turn.at] : []))
      const keep = (c?: FlowConversation) => [...(c?.turns ?? []), ...added].slice(-limit || Infinity)
      await flows.update(
        `${deviceId}:${contact}`,
        current => ({ deviceId, contact, turns: keep(current), updatedAt: Date.now(), replies: [...recent(current?.replies), ...replies] }),
        FLOW_TTL_MS,
      )
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
  const text = String(address ?? '')
    .trim()
    .toLowerCase()
  const lid = /^(\d{1,32})(?::\d+)?@lid$/.exec(text)
  if (lid) return `${lid[1]}@lid`
  const jid = /^(\d{8,15})(?::\d+)?@s\.whatsapp\.net$/.exec(text)
  if (jid) return jid[1]
  const digits = text.replace(/[\s().+-]/g, '')
  return /^\d{8,15}$/.test(digits) ? digits : undefined
}
