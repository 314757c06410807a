import { randomBytes, randomUUID } from 'node:crypto'
import type { Storage } from '../../ports/storage.ts'
import { Collection } from '../../store/collection.ts'
import type { KeyedLock } from '../../store/keyed-lock.ts'
import type { Liveness } from '../instances.ts'
import type { StoredAction } from './actions.ts'

/** A scheduled send as stored (its action, possibly large, is stored apart under `schedule-body:<id>`). */
export interface ScheduleItem {
  id: string
  accountId: string
  deviceId: string
  /** Normalised recipient. */
  to: string
  /** The text a listing shows. */
  summary: string
  /** When it is due (ms since the epoch). */
  dueAt: number
  /** The wall-clock time asked for, `YYYY-MM-DD HH:MM:SS` in the gateway's time zone. */
  agendamento: string
  state: 'pending' | 'failed'
  /** Failed attempts so far. */
  attempts: number
  /** Not before this time (after a failed attempt). */
  retryAt?: number
  /** Held by a sender (an instance) until `until`, or until that instance is gone: nobody else sends it meanwhile. */
  claim?: { token: string; owner?: string; until: number }
  lastError?: string
  createdAt: number
}

/** What a new scheduled item needs. */
export interface NewScheduleItem {
  accountId: string
  deviceId: string
  to: string
  summary: string
  dueAt: number
  agendamento: string
}

/** How long a failed item stays listed. */
const FAILED_TTL_MS = 7 * 86_400_000

/**
 * Scheduled items in Storage: `schedule:<deviceId>:<id>` (small records, listed per device and
 * scanned by the scheduler) and `schedule-body:<id>` (the action with its media). An item is sent
 * only by whoever holds its claim: `claim` is the one step that decides it, a compare-and-set of the
 * record in the shared store, so with several processes each item has one sender at a time; a claim
 * whose instance is gone is void.
 */
export class ScheduleStore {
  private readonly items: Collection<ScheduleItem>
  private readonly bodies: Collection<StoredAction>

  constructor(storage: Storage, lock: KeyedLock) {
    this.items = new Collection(storage, lock, 'schedule')
    this.bodies = new Collection(storage, lock, 'schedule-body')
  }

  /** Store a new pending item and its action (the action first, so an item never lacks one). */
  async add(input: NewScheduleItem, action: StoredAction): Promise<ScheduleItem> {
    const item: ScheduleItem = { id: randomUUID(), ...input, state: 'pending', attempts: 0, createdAt: Date.now() }
    await this.bodies.put(item.id, action)
    await this.items.put(itemId(item), item)
    return item
  }

  /** The items of a device (pending and failed), earliest first. */
  async forDevice(deviceId: string): Promise<ScheduleItem[]> {
    const items: ScheduleItem[] = []
    for await (const [, item] of this.items.withPrefix(`${deviceId}:`)) if (item.deviceId === deviceId) items.push(item)
    return items.sort((a, b) => a.dueAt - b.dueAt || a.createdAt - b.createdAt)
  }

  /** Every item (a scan of the small records). */
  async *all(): AsyncIterable<ScheduleItem> {
    for await (const [, item] of this.items.all()) yield item
  }

  /** The stored action of an item. */
  body(item: ScheduleItem): Promise<StoredAction | undefined> {
    return this.bodies.get(item.id)
  }

  /**
   * Claim a pending item for `leaseMs` for this instance, unless a live instance holds it; the
   * claimed item, or undefined when someone else holds it or it is gone.
   */
  async claim(item: ScheduleItem, leaseMs: number, liveness: Liveness): Promise<ScheduleItem | undefined> {
    const token = randomBytes(12).toString('base64url')
    const now = Date.now()
    const result = await this.items.update(itemId(item), current => {
      if (!current || current.state !== 'pending' || claimHolds(current, liveness, now)) return undefined
      return { ...current, claim: { token, owner: liveness.id, until: now + leaseMs } }
    })
    return result?.claim?.token === token ? result : undefined
  }

  /** The claimed item was sent: remove it and its action. */
  async complete(item: ScheduleItem): Promise<void> {
    await this.items.remove(itemId(item))
    await this.bodies.remove(item.id)
  }

  /**
   * Record a failed attempt of a claimed item: pending again from `retryAt`, or, without one,
   * failed (kept listed for 7 days, its action dropped).
   */
  async fail(item: ScheduleItem, error: string, retryAt: number | undefined): Promise<void> {
    await this.items.update(
      itemId(item),
      current => {
        if (!current || current.claim?.token !== item.claim?.token) return undefined
        const { claim: _released, ...rest } = current
        const next: ScheduleItem = { ...rest, attempts: current.attempts + 1, lastError: error.slice(0, 300) }
        return retryAt !== undefined ? { ...next, retryAt } : { ...next, state: 'failed', retryAt: undefined }
      },
      retryAt === undefined ? FAILED_TTL_MS : undefined,
    )
    if (retryAt === undefined) await this.bodies.remove(item.id)
  }

  /** Release a claim without counting an attempt (the send never started: shutting down, or it waited too long in the device's queue). */
  async release(item: ScheduleItem): Promise<void> {
    await this.items.update(itemId(item), current => {
      if (!current || current.claim?.token !== item.claim?.token) return undefined
      const { claim: _released, ...rest } = current
      return rest
    })
  }

  /** Remove every item of a deleted device. */
  async removeDevice(deviceId: string): Promise<number> {
    let removed = 0
    for (const item of await this.forDevice(deviceId)) {
      await this.items.remove(itemId(item))
      await this.bodies.remove(item.id)
      removed++
    }
    return removed
  }
}

// --- Internal helpers ---

/** Whether an item's claim still keeps others off it: unexpired, and its instance alive (a claim without one, from before instances, holds until it expires). */
export function claimHolds(item: ScheduleItem, liveness: Liveness, now: number): boolean {
  const claim = item.claim
  return claim !== undefined && claim.until > now && (claim.owner === undefined || liveness.isAlive(claim.owner))
}

function itemId(item: Pick<ScheduleItem, 'deviceId' | 'id'>): string {
  return `${item.deviceId}:${item.id}`
}
