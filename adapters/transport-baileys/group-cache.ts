import type { BaileysEventMap, GroupMetadata, GroupParticipant } from '@whiskeysockets/baileys'
import { BoundedMap } from 'zapgate/adapter-kit'
import { normalizeJid } from './jid.ts'

/** Fields of a `groups.update` that describe the group (its `author*` fields describe the change). */
const GROUP_FIELDS = [
  'subject',
  'subjectOwner',
  'subjectTime',
  'desc',
  'descOwner',
  'descId',
  'descTime',
  'inviteCode',
  'announce',
  'restrict',
  'ephemeralDuration',
  'memberAddMode',
  'joinApprovalMode',
  'size',
  'isCommunity',
  'linkedParent',
] as const

/**
 * One device's group metadata, for Baileys' `cachedGroupMetadata`: every send to a group needs the
 * participant list, and without a cache Baileys asks WhatsApp for it on every send (a busy group then
 * risks `rate-overlimit`). Filled by the first fetch (concurrent sends share it) and by groupInfo (not by
 * groupCreate, whose answer also lists members it failed to add), and kept current from the socket's events: `groups.upsert` (joined or created),
 * `groups.update` (subject, settings) and `group-participants.update` (add, remove, promote,
 * demote), applied to the cached copy without asking WhatsApp. A number change (`modify`) or the
 * device leaving drops the entry; so does the TTL, after which the next send fetches again.
 */
export class GroupCache {
  private readonly entries: BoundedMap<string, GroupMetadata>
  private readonly fetching = new Map<string, Promise<GroupMetadata | undefined>>()
  /** Per group with a fetch under way (lookup's or fresh's): how many fetch it, and how many changes came meanwhile (an answer older than a change is not cached). */
  private readonly watched = new Map<string, { fetches: number; changes: number }>()

  constructor(limit = 500, ttlMs = 3_600_000) {
    this.entries = new BoundedMap(limit, ttlMs)
  }

  /** The cached metadata of `jid`. */
  get(jid: string): GroupMetadata | undefined {
    return this.entries.get(jid)
  }

  /** Cache fresh metadata (a fetch, groupInfo, groups.upsert). */
  set(metadata: GroupMetadata): void {
    if (metadata?.id) this.entries.set(metadata.id, metadata)
  }

  /** Forget everything (a new link may be another account). */
  clear(): void {
    this.entries.clear()
    this.fetching.clear()
    this.watched.clear()
  }

  /** Entries held. */
  get size(): number {
    return this.entries.size
  }

  /** Baileys' cachedGroupMetadata: the cached entry, else one shared fetch (cached); undefined when it fails. */
  async lookup(jid: string, fetch: () => Promise<GroupMetadata>): Promise<GroupMetadata | undefined> {
    const cached = this.entries.get(jid)
    if (cached) return cached
    let pending = this.fetching.get(jid)
    if (!pending) {
      pending = this.fresh(jid, fetch).catch(() => undefined) // Baileys then asks itself, and reports the error to the send
      this.fetching.set(jid, pending)
      void pending.finally(() => this.fetching.delete(jid))
    }
    return pending
  }

  /** Fetch `jid`'s metadata now (groupInfo: not from the cache) and cache it, unless the group changed while the fetch was on its way (the answer may predate the change: the next send fetches again). */
  async fresh(jid: string, fetch: () => Promise<GroupMetadata | undefined>): Promise<GroupMetadata | undefined> {
    const watch = this.watched.get(jid) ?? this.watched.set(jid, { fetches: 0, changes: 0 }).get(jid)!
    const changesBefore = watch.changes
    watch.fetches++
    try {
      const metadata = await fetch()
      if (metadata && watch.changes === changesBefore) this.set(metadata)
      return metadata
    } finally {
      if (--watch.fetches === 0 && this.watched.get(jid) === watch) this.watched.delete(jid)
    }
  }

  /** `groups.update`: merge the changed fields into a cached entry (full metadata replaces it). */
  applyUpdate(update: Partial<GroupMetadata>): void {
    if (!update?.id) return
    this.changed(update.id)
    if (Array.isArray(update.participants) && typeof update.subject === 'string') return this.set(update as GroupMetadata)
    const cached = this.entries.get(update.id)
    if (!cached) return
    const changed: Partial<GroupMetadata> = {}
    for (const field of GROUP_FIELDS) if (update[field] !== undefined) (changed as Record<string, unknown>)[field] = update[field]
    this.entries.set(update.id, { ...cached, ...changed })
  }

  /** `group-participants.update`, applied to a cached entry; `self` names the device (its PN and LID JIDs). */
  applyParticipants(event: BaileysEventMap['group-participants.update'], self: string[]): void {
    this.changed(event.id)
    const cached = this.entries.get(event.id)
    if (!cached) return
    const changed = (event.participants ?? []).map(p => (typeof p === 'string' ? ({ id: p } as GroupParticipant) : p))
    const hits = (p: GroupParticipant) => changed.some(c => sameUser(p, c))
    if (event.action === 'modify' || (event.action === 'remove' && changed.some(c => self.some(jid => sameUser(c, { id: jid }))))) {
      return this.entries.delete(event.id)
    }
    let participants = cached.participants
    if (event.action === 'add') participants = [...participants.filter(p => !hits(p)), ...changed.map(c => ({ ...c, admin: c.admin ?? null }))]
    else if (event.action === 'remove') participants = participants.filter(p => !hits(p))
    else if (event.action === 'promote' || event.action === 'demote') {
      const admin = event.action === 'promote' ? 'admin' : null
      participants = participants.map(p => (hits(p) ? { ...p, admin, isAdmin: admin !== null, isSuperAdmin: false } : p))
    }
    this.entries.set(event.id, { ...cached, participants, size: participants.length })
  }

  /** A group event: a fetch of that group under way must not cache its answer. */
  private changed(jid: string): void {
    const watch = this.watched.get(jid)
    if (watch) watch.changes++
  }
}

// --- Internal helpers ---

/** Whether two participants are the same user (by id, phone number or LID, devices ignored). */
function sameUser(a: { id: string; phoneNumber?: string; lid?: string }, b: { id: string; phoneNumber?: string; lid?: string }): boolean {
  const ids = (p: typeof a) => [p.id, p.phoneNumber, p.lid].filter((x): x is string => typeof x === 'string' && x !== '').map(normalizeJid)
  const other = ids(b)
  return ids(a).some(id => other.includes(id))
}
