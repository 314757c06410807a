import { randomUUID } from 'node:crypto'
import type { Storage } from '../../ports/storage.ts'
import { Collection } from '../../store/collection.ts'
import type { KeyedLock } from '../../store/keyed-lock.ts'
import { claimedUntil, newClaim, type Claim } from '../claims.ts'
import type { Liveness } from '../instances.ts'
import type { StoredAction } from './actions.ts'
import { GatewayError } from '../../errors.ts'
import { Counters } from '../../store/counters.ts'

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
}

/** How much an account may keep scheduled: pending items, and bytes of their stored actions (media included). */
interface ScheduleQuota {
  maxPending: number
  maxBytes: number
}

type NewScheduleItem = Pick<ScheduleItem, 'accountId' | 'deviceId' | 'to' | 'summary' | 'dueAt' | 'agendamento'>

/** How long a failed item stays listed. */
const FAILED_TTL_MS = 7 * 86_400_000

/** Scheduled items in Storage: `schedule:<deviceId>:<id>` (small records) and `schedule-body:<id>` (the action with its media). An item is sent only by the holder of its claim, a compare-and-set of the record (docs/scaling.md#what-is-safe). */
export type ScheduleStore = ReturnType<typeof createScheduleStore>

/** A schedule store over `storage`, within `quota` per account. */
export function createScheduleStore(storage: Storage, lock: KeyedLock, quota: ScheduleQuota = { maxPending: Infinity, maxBytes: Infinity }) {
  const items = new Collection<ScheduleItem>(storage, lock, 'schedule')
  const bodies = new Collection<StoredAction>(storage, lock, 'schedule-body')
  // Per account: pending items and their bytes, counted in the store (shared by every process).
  const usage = new Counters(storage, 'schedule-usage')
  // An item is no longer pending (sent, failed for good, deleted; or refused): its share of the quota is free again.
  const freeQuota = async (item: Pick<ScheduleItem, 'accountId' | 'bytes'>): Promise<void> => {
    await usage.add(`${item.accountId}:count`, -1)
    await usage.add(`${item.accountId}:bytes`, -(item.bytes ?? 0))
  }
  // Count one more pending item of `bytes` for the account, or refuse it (`quota-exceeded`) and count nothing.
  const reserve = async (accountId: string, bytes: number): Promise<void> => {
    const count = await usage.add(`${accountId}:count`, 1)
    const total = await usage.add(`${accountId}:bytes`, bytes)
    if (count <= quota.maxPending && total <= quota.maxBytes) return
    await freeQuota({ accountId, bytes })
    const over = count > quota.maxPending ? `${quota.maxPending} scheduled messages` : `${sizeText(quota.maxBytes)} of scheduled messages`
    throw new GatewayError('quota-exceeded', { detail: over, retryAfterSeconds: 60 })
  }
  const forDevice = async (deviceId: string): Promise<ScheduleItem[]> => {
    const found: ScheduleItem[] = []
    for await (const [, item] of items.withPrefix(`${deviceId}:`)) if (item.deviceId === deviceId) found.push(item)
    return found.sort((a, b) => a.dueAt - b.dueAt || a.createdAt - b.createdAt)
  }
  // The record without `item`'s claim; undefined when that claim no longer holds it.
  const unclaimed = (current: ScheduleItem | undefined, item: ScheduleItem): ScheduleItem | undefined =>
    current && current.claim?.token === item.claim?.token ? { ...current, claim: undefined } : undefined
  return {
    /** Store a new pending item and its action (first, so an item never lacks one) within the account's quota, else `quota-exceeded`. */
    async add(input: NewScheduleItem, action: StoredAction): Promise<ScheduleItem> {
      const bytes = Buffer.byteLength(JSON.stringify(action))
      await reserve(input.accountId, bytes)
      const item: ScheduleItem = { id: randomUUID(), ...input, state: 'pending', attempts: 0, createdAt: Date.now(), bytes }
      try {
        await bodies.put(item.id, action)
        await items.put(itemKey(item), item)
      } catch (err) {
        await freeQuota(item).catch(() => undefined)
        throw err
      }
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
    /** Claim a pending item for `leaseMs` unless a claim holds it: the claimed item, or undefined. */
    async claim(item: ScheduleItem, leaseMs: number, liveness: Liveness): Promise<ScheduleItem | undefined> {
      const claim = newClaim(liveness.id, leaseMs)
      const result = await items.update(itemKey(item), current => {
        if (!current || current.state !== 'pending' || claimedUntil(current.claim, liveness) !== undefined) return undefined
        return { ...current, claim }
      })
      return result?.claim?.token === claim.token ? result : undefined
    },
    /** The claimed item was sent: remove it and its action. */
    async complete(item: ScheduleItem): Promise<void> {
      if (await items.remove(itemKey(item))) await freeQuota(item)
      await bodies.remove(item.id)
    },
    /** Record a failed attempt of a claimed item: pending again from `retryAt`, or failed for good (listed 7 days, its action dropped). */
    async fail(item: ScheduleItem, error: string, retryAt?: number): Promise<void> {
      let failed = false
      await items.update(
        itemKey(item),
        current => {
          const rest = unclaimed(current, item)
          failed = rest !== undefined && retryAt === undefined // `change` may run again on a newer record
          if (!rest) return undefined
          const next: ScheduleItem = { ...rest, attempts: rest.attempts + 1, lastError: error.slice(0, 300) }
          return retryAt !== undefined ? { ...next, retryAt } : { ...next, state: 'failed', retryAt: undefined }
        },
        retryAt === undefined ? FAILED_TTL_MS : undefined,
      )
      if (failed) await freeQuota(item) // failed for good: listed, but no longer pending
      if (retryAt === undefined) await bodies.remove(item.id)
    },
    /** Release a claim without counting an attempt (the send never started). */
    async release(item: ScheduleItem): Promise<void> {
      await items.update(itemKey(item), current => unclaimed(current, item))
    },
    /** Remove every item of a deleted device. */
    async removeDevice(deviceId: string): Promise<number> {
      let removed = 0
      for (const item of await forDevice(deviceId)) {
        // Removed as it stands (a send may have failed it for good since the listing, freeing its place itself).
        let current: ScheduleItem | undefined = item
        while (current && !(await items.removeIfEqual(itemKey(item), current))) current = await items.load(itemKey(item))
        if (current?.state === 'pending') await freeQuota(current)
        await bodies.remove(item.id)
        removed++
      }
      return removed
    },
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
