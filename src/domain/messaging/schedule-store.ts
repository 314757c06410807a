import { randomUUID } from 'node:crypto'
import type { Storage } from '../../ports/storage.ts'
import { Collection } from '../../store/collection.ts'
import type { KeyedLock } from '../../store/keyed-lock.ts'
import { claimedUntilConfirmed, newClaim, writingClaim, type Claim } from '../claims.ts'
import type { Liveness } from '../instances.ts'
import type { StoredAction } from './actions.ts'
import { GatewayError } from '../../errors.ts'

/** A scheduled send as stored (its action, possibly large, is stored apart under `schedule-body:<id>`). */
export interface ScheduleItem {
  id: string
  accountId: string
  deviceId: string
  to: string
  /** The text a listing shows. */
  summary: string
  dueAt: number
  /** The wall-clock time asked for, `YYYY-MM-DD HH:MM:SS` in the gateway's time zone. */
  agendamento: string
  state: 'pending' | 'failed'
  attempts: number
  /** Not before this time (after a failed attempt). */
  retryAt?: number
  /** Held by the instance sending it: nobody else sends it meanwhile. */
  claim?: Claim
  lastError?: string
  createdAt: number
  /** Bytes of its stored action (counted against the account's quota while it is pending). */
  bytes?: number
  /** Its place in the account's quota is being taken (`opening`: not yet listed nor sent) or freed (`closing`) by its claim's holder, or once that claim is void by whoever claims it (docs/decisions.md, "Schedule quota"). */
  quota?: 'opening' | 'closing'
}

/** An account's pending items and their bytes, and the journal of the items whose place is being taken (1) or freed (-1), kept until their record has settled. */
type Usage = { count: number; bytes: number; journal: Record<string, 1 | -1> }

/** How much an account may keep scheduled: pending items, and bytes of their stored actions (media included). */
interface ScheduleQuota {
  maxPending: number
  maxBytes: number
}

type NewScheduleItem = Pick<ScheduleItem, 'accountId' | 'deviceId' | 'to' | 'summary' | 'dueAt' | 'agendamento'>

/** How long a failed item stays listed; how long an add or a removal holds the items it marks. */
const [FAILED_TTL_MS, LEASE_MS] = [7 * 86_400_000, 60_000]

/** Scheduled items in Storage: `schedule:<deviceId>:<id>` (small records) and `schedule-body:<id>` (the action with its media). An item is sent only by the holder of its claim, a compare-and-set of the record (docs/scaling.md#what-is-safe). */
export type ScheduleStore = ReturnType<typeof createScheduleStore>

/** A schedule store over `storage`, within `quota` per account. */
export function createScheduleStore(storage: Storage, lock: KeyedLock, quota: ScheduleQuota = { maxPending: Infinity, maxBytes: Infinity }) {
  const items = new Collection<ScheduleItem>(storage, lock, 'schedule')
  const bodies = new Collection<StoredAction>(storage, lock, 'schedule-body')
  // Per account, in the store (shared by every process): each change is one compare-and-set of the account's record, done once per item by its journal.
  const usage = new Collection<Usage>(storage, lock, 'schedule-quota')
  // Take (1) or free (-1) the item's place unless its journal entry (else its record: `opening`, not taken) says so already; past the quota, `quota-exceeded`.
  const count = (item: ScheduleItem, sign: 1 | -1) =>
    usage.update(item.accountId, (u = { count: 0, bytes: 0, journal: {} }) => {
      if ((u.journal[item.id] ?? (item.quota === 'opening' ? -1 : 1)) === sign) return undefined
      // Never below 0: an item stored before this record existed (an older version's counters) was never counted in it.
      const next = { count: Math.max(0, u.count + sign), bytes: Math.max(0, u.bytes + sign * (item.bytes ?? 0)), journal: { ...u.journal, [item.id]: sign } }
      if (sign < 0 || (next.count <= quota.maxPending && next.bytes <= quota.maxBytes)) return next
      const over = next.count > quota.maxPending ? `${quota.maxPending} scheduled messages` : `${sizeText(quota.maxBytes)} of scheduled messages`
      throw new GatewayError('quota-exceeded', { detail: over, retryAfterSeconds: 60 })
    })
  // Drop the item's journal entry (its record has settled), and the account's record once it counts nothing (an absent one counts zero).
  const forget = async (item: ScheduleItem): Promise<void> => {
    const u = await usage.update(item.accountId, u => (u?.journal[item.id] && delete u.journal[item.id] ? u : undefined))
    if (u && !u.count && !u.bytes && !Object.keys(u.journal).length) await usage.removeIfEqual(item.accountId, u)
  }
  // Finish a `quota` mark we hold: the place freed once (an `opening` one only if taken), the action dropped, the record kept failed or removed, the journal entry dropped. Each step may be done again after a failure or a crash.
  const settle = async (held: ScheduleItem): Promise<void> => {
    await count(held, -1)
    await bodies.remove(held.id)
    if (held.state !== 'failed') await items.remove(itemKey(held))
    else await items.replace(itemKey(held), held, { ...held, quota: undefined, claim: undefined }, FAILED_TTL_MS)
    await forget(held)
  }
  // Mark a pending item we claimed `closing` (`change`: how it ends), keeping our claim: the marked record, or undefined when the claim no longer holds it.
  const close = async (item: ScheduleItem, change: Partial<ScheduleItem> = {}, ttlMs?: number): Promise<ScheduleItem | undefined> => {
    const held = await items.update(itemKey(item), current => ifHeld(current, item, { ...change, quota: 'closing' }), ttlMs)
    return held?.quota === 'closing' && held.claim?.token === item.claim?.token ? held : undefined
  }
  // Remove an item as it stands (a send may have failed it for good since it was read, freeing its place itself): a pending one through a `closing` mark held by `owner` (its place freed once); one marked by someone else is theirs to finish.
  const remove = async (item: ScheduleItem, owner: string): Promise<void> => {
    for (let current = await items.load(itemKey(item)); current && !current.quota; current = await items.load(itemKey(item))) {
      const closing: ScheduleItem = { ...current, quota: 'closing', claim: newClaim(owner, LEASE_MS) }
      if (current.state === 'pending' ? await items.replace(itemKey(item), current, closing) : await items.removeIfEqual(itemKey(item), current))
        return void (await (current.state === 'pending' ? settle(closing) : bodies.remove(item.id)))
    }
  }
  const forDevice = async (deviceId: string): Promise<ScheduleItem[]> => {
    const found: ScheduleItem[] = []
    for await (const [, item] of items.withPrefix(`${deviceId}:`)) if (item.deviceId === deviceId && item.quota !== 'opening') found.push(item)
    return found.sort((a, b) => a.dueAt - b.dueAt || a.createdAt - b.createdAt)
  }
  // The record with `change` (by default, without `item`'s claim); undefined when that claim no longer holds it.
  const ifHeld = (current: ScheduleItem | undefined, item: ScheduleItem, change: Partial<ScheduleItem> = { claim: undefined }): ScheduleItem | undefined =>
    current && current.claim?.token === item.claim?.token ? { ...current, ...change } : undefined
  return {
    /** Store a new pending item and its action within the account's quota, else `quota-exceeded`: marked `opening` (held by `owner`) until its place is taken and its action stored. */
    async add(input: NewScheduleItem, action: StoredAction, owner = 'local'): Promise<ScheduleItem> {
      const bytes = Buffer.byteLength(JSON.stringify(action))
      const item: ScheduleItem = { id: randomUUID(), ...input, state: 'pending', attempts: 0, createdAt: Date.now(), bytes }
      const opening: ScheduleItem = { ...item, quota: 'opening', claim: newClaim(owner, LEASE_MS) }
      await items.put(itemKey(item), opening)
      try {
        await count(opening, 1)
        await bodies.put(item.id, action)
        if (!(await items.replace(itemKey(item), opening, item))) throw new Error('the scheduled message was undone while being stored (its claim ran out)')
      } catch (err) {
        await settle(opening).catch(() => undefined) // else undone by whoever claims it once our claim is void
        throw err
      }
      await forget(item).catch(() => undefined) // a journal entry left behind is dropped when the item closes
      return item
    },
    /** The items of a device (pending and failed), earliest first. */
    forDevice,
    /** Every item with its key, or a device's (scans of the small records). */
    all: (deviceId?: string): AsyncIterable<[key: string, item: ScheduleItem]> => (deviceId === undefined ? items.all() : items.withPrefix(`${deviceId}:`)),
    /** An item by its key. */
    get: (key: string): Promise<ScheduleItem | undefined> => items.get(key),
    /** The stored action of an item. */
    body: (item: ScheduleItem): Promise<StoredAction | undefined> => bodies.get(item.id),
    /** Whether the store still holds `item`'s claim (one read): false once another process took the item over, or it was finished. */
    holds: async (item: ScheduleItem): Promise<boolean> => (await items.load(itemKey(item)))?.claim?.token === item.claim?.token,
    /**
     * Claim a pending item (or one marked `quota`, to settle it) for `leaseMs` unless a claim holds it: the claimed item, or undefined.
     * Another instance's claim is taken over only when that instance's record, read after the item's, is still gone (the last registry
     * read may be a heartbeat old: a process back from a pause holds what it claimed once registered again).
     */
    async claim(item: ScheduleItem, leaseMs: number, liveness: Liveness): Promise<ScheduleItem | undefined> {
      const claim = newClaim(liveness.id, leaseMs)
      const claiming = items.update(itemKey(item), async current => {
        if (!current || (current.state !== 'pending' && !current.quota) || (await claimedUntilConfirmed(current.claim, liveness)) !== undefined)
          return undefined
        return { ...current, claim }
      })
      const result = await writingClaim(claim, claiming) // its answer lost: taken again at our next try, not after its length
      return result?.claim?.token === claim.token ? result : undefined
    },
    /** The claimed item was sent: its place freed, it and its action removed. */
    complete: async (item: ScheduleItem): Promise<void> => void (await close(item).then(held => held && settle(held))),
    /** Record a failed attempt of a claimed item: pending again from `retryAt`, or failed for good (listed 7 days, its action dropped, its place freed). */
    async fail(item: ScheduleItem, error: string, retryAt?: number): Promise<void> {
      const next = { attempts: item.attempts + 1, lastError: error.slice(0, 300), retryAt }
      if (retryAt !== undefined) await items.update(itemKey(item), current => ifHeld(current, item, { ...next, claim: undefined }))
      else await close(item, { ...next, state: 'failed' }, FAILED_TTL_MS).then(held => held && settle(held))
    },
    /** Finish a claimed item marked `quota` (an add or a removal cut short by a crash or a store failure). */
    settle,
    /** Release a claim without counting an attempt (the send never started). */
    release: async (item: ScheduleItem): Promise<void> => void (await items.update(itemKey(item), current => ifHeld(current, item))),
    /** Remove every item of a deleted device: a pending one through a `closing` mark held by `owner` (its place freed once); one marked by someone else is theirs to finish. */
    async removeDevice(deviceId: string, owner = 'local'): Promise<number> {
      const listed = await forDevice(deviceId)
      for (const item of listed) await remove(item, owner)
      return listed.length
    },
    /** Remove one item as it stands, as removeDevice does (a scheduled send whose device was deleted meanwhile). */
    remove,
  }
}

// --- Internal helpers ---

/** A byte count as people read it: `256 MB`, `8 KB`. */
function sizeText(bytes: number): string {
  return bytes >= 2 ** 20 ? `${Math.round((bytes / 2 ** 20) * 10) / 10} MB` : `${Math.ceil(bytes / 1024)} KB`
}

/** An item's key in the store. */
export function itemKey(item: Pick<ScheduleItem, 'deviceId' | 'id'>): string {
  return `${item.deviceId}:${item.id}`
}
