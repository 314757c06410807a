import type { GroupInfo } from 'zapgate'
import type { LinkTarget } from './sessions.ts'
import type { InboxEntry, NetworkStats, PhoneMessage, PhoneProfile } from './types.ts'

/**
 * The phone side of a network, as the simulator's routes (`/_sim`) drive it: the simulated network
 * (MemoryNetwork), or another network whose phones answer the same calls (the local WhatsApp peer
 * of zapgate/adapters/wa-peer). One set of routes, bodies and answers for every network, so that a
 * test written against the simulator runs against the real Baileys stack by changing its set-up.
 */
export interface PhoneNetwork {
  /** `phone` scans a QR or enters a pairing code (`{qr}`, `{code}`, or `{deviceId}` for whatever that device shows). */
  scan(target: LinkTarget, phone: string): Promise<unknown>
  /** `from` sends a message to a phone (or a group it belongs to); answers the message id. */
  sendFromPhone(from: string, to: string, message: PhoneMessage): Promise<string>
  /** What `phone` has received, oldest first. */
  inbox(phone: string): InboxEntry[]
  /** Set how `phone` appears to others (LID, push name, hidden number); answers its LID, if any. */
  registerPhone(phone: string, profile: PhoneProfile): string | undefined
  /** The phone removes a linked device; false if it was not linked. */
  unlink(deviceId: string): Promise<boolean>
  /** Counts since the network started (`replaced` included); a network may add its own. */
  stats(): NetworkStats
  /** `creator` creates a group (absent: the network has no groups, the route answers 501). */
  createGroup?(creator: string, subject: string, members?: string[], options?: { description?: string }): GroupInfo
  /** A group's invite link, or undefined for an unknown group (absent: no groups, 501). */
  inviteLink?(groupId: string): string | undefined
}
