import { setMaxListeners } from 'node:events'
import { DeliveryAttempts, ShutdownAbort, type DeliveryDependencies } from './attempt.ts'
import { leaseHolds } from './lease.ts'
import type { OutboxRecord } from './outbox-store.ts'
import { DeliveryTimetable } from './timetable.ts'

export type { DeliveryDependencies } from './attempt.ts'

/** Longest single timer: shorter than setTimeout's limit, and harmless when the wall clock jumps. */
const MAX_TIMER_MS = 3_600_000
/** When to try again after an internal failure around an attempt (the store unreachable). */
const INTERNAL_RETRY_MS = 5_000
/** How long close() lets attempts in flight finish before aborting them. */
const CLOSE_GRACE_MS = 2_000

/**
 * Delivers the outbox: decides when attempts happen (DeliveryAttempts does each one).
 *
 * A bounded timetable (DeliveryTimetable) says what is due when. Due deliveries wait in a per-device
 * line and start while the device has fewer than `concurrencyPerDevice` attempts in flight. The loop
 * never awaits an attempt, so a slow or dead receiver holds only its own device's slots. Memory stays
 * bounded: the timetable holds at most `timetableCapacity` entries; each line holds `lineLimit` keys,
 * and more only while all lines together hold fewer than `timetableCapacity`; whatever does not fit
 * waits in storage. A device whose line overflowed is refilled from its own records (a prefix scan)
 * when its line is half empty; what the timetable left out is reloaded (a scan of the outbox,
 * skipping overflowed devices) when its time comes and half the timetable is free.
 */
export class DeliveryLoop {
  private readonly attempts: DeliveryAttempts
  private readonly timetable: DeliveryTimetable
  private readonly lines = new Map<string, string[]>()
  private readonly queued = new Set<string>()
  /** Devices with due deliveries in storage only, each with the number of its last overflow. */
  private readonly overflowed = new Map<string, number>()
  private overflows = 0
  private readonly refilling = new Set<string>()
  private readonly inFlight = new Set<string>()
  /** Aborted by close(): every attempt in flight shares it. */
  private readonly shutdown = new AbortController()
  private readonly busy = new Map<string, number>()
  private readonly running = new Set<Promise<unknown>>()
  private timer?: NodeJS.Timeout
  private timerAt = Infinity
  private reconciler?: NodeJS.Timeout
  private reloading?: Promise<void>
  /** An instance left while a scan ran: scan once more (it may have passed over that one's records). */
  private reloadAgain = false
  private closed = false
  private readonly clock: () => number

  constructor(private readonly deps: DeliveryDependencies) {
    this.clock = deps.clock ?? Date.now
    this.attempts = new DeliveryAttempts(deps, key => this.inFlight.has(key))
    setMaxListeners(0, this.shutdown.signal) // every attempt in flight listens to it, however many there are
    // A gone instance's records are adopted by a scan (its leases are void from now on).
    deps.liveness.onDeparture(() => {
      if (this.reloading) this.reloadAgain = true
      else void this.reload()
    })
    this.timetable = new DeliveryTimetable(deps.settings.timetableCapacity)
  }

  /** This instance's id: the owner of the records it schedules, and of the leases it takes. */
  get owner(): string {
    return this.deps.liveness.id
  }

  /**
   * Load the pending deliveries from storage and start delivering; then rescan the outbox every
   * `reconcileMs`. The rescan is what makes "every stored event ends in a delivery or a dead letter"
   * hold whatever the network did: a write whose answer was lost may land at any time, even after
   * its retry (on another connection) and after the event was delivered; the record it leaves, owned
   * by this instance, is scheduled by the next scan (a duplicate with the same webhook-id at worst).
   */
  start(): Promise<void> {
    if (!this.closed && !this.reconciler) {
      this.reconciler = setInterval(() => void this.reload(), this.deps.settings.reconcileMs)
      this.reconciler.unref()
    }
    return this.reload()
  }

  /**
   * A record found pending in storage that this instance may not have scheduled: a write of its own
   * whose answer was lost (timed out) may have landed after all, so "already pending" is no proof
   * that someone schedules it. Scheduled here when it is this instance's (at its stored due time),
   * adopted first when its owner is gone; a live owner schedules its own by this same rule.
   */
  async track(key: string, record: OutboxRecord): Promise<void> {
    if (this.closed || this.inFlight.has(key) || this.queued.has(key)) return
    const mine = await this.mine(key, record)
    if (mine) this.enqueue(key, mine.deviceId, this.dueOf(mine, this.clock()))
  }

  /** A delivery is due at `due` (a new event, or one rescheduled). */
  enqueue(key: string, deviceId: string, due: number): void {
    if (this.closed || this.inFlight.has(key) || this.queued.has(key)) return
    this.timetable.add({ key, deviceId, due })
    this.arm()
  }

  /** Forget what is held in memory for a deleted device (its records are deleted by the caller). */
  forgetDevice(deviceId: string): void {
    for (const key of this.lines.get(deviceId) ?? []) this.queued.delete(key)
    this.lines.delete(deviceId)
    this.overflowed.delete(deviceId)
  }

  /** Stop: no new attempts; those in flight get a short grace, then are aborted (their records stay due). */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    clearTimeout(this.timer)
    clearInterval(this.reconciler)
    let graceTimer: NodeJS.Timeout | undefined
    const grace = new Promise<void>(resolve => (graceTimer = setTimeout(resolve, CLOSE_GRACE_MS)))
    await Promise.race([Promise.allSettled([...this.running]), grace])
    clearTimeout(graceTimer)
    this.shutdown.abort(new ShutdownAbort())
    await Promise.allSettled([...this.running])
    await this.reloading
  }

  // --- Internal helpers ---

  /** Set the one timer for the earliest due delivery (or reload, when there is room for one). */
  private arm(): void {
    if (this.closed) return
    const horizon = !this.reloading && this.roomToReload() ? this.timetable.horizon : Infinity
    const next = Math.min(this.timetable.peek()?.due ?? Infinity, horizon)
    if (next === Infinity || (this.timer && this.timerAt <= next)) return
    clearTimeout(this.timer)
    const now = this.clock()
    const delay = Math.min(Math.max(next - now, 0), MAX_TIMER_MS)
    this.timerAt = now + delay
    this.timer = setTimeout(() => this.tick(), delay)
    this.timer.unref()
  }

  private tick(): void {
    this.timer = undefined
    this.timerAt = Infinity
    if (this.closed) return
    const now = this.clock()
    const devices = new Set<string>()
    for (const item of this.timetable.takeDue(now)) {
      this.toLine(item.deviceId, item.key)
      devices.add(item.deviceId)
    }
    for (const deviceId of devices) this.pump(deviceId)
    // Whatever was left out of the timetable is due: bring it in once half the timetable is free.
    if (this.timetable.horizon <= now && this.roomToReload() && !this.reloading) void this.reload()
    else this.arm()
  }

  /** Whether a reload would bring in a useful batch: half the timetable is free (so reloads stay rare). */
  private roomToReload(): boolean {
    const { capacity } = this.timetable
    return capacity - this.timetable.size >= Math.max(1, Math.floor(capacity / 2))
  }

  /**
   * Put a due delivery in its device's line; a full line marks the device overflowed (the key stays
   * in storage only). Every line may hold `lineLimit` keys, and more while all lines together hold
   * fewer than `timetableCapacity`: a burst on a few devices then stays in memory instead of being
   * read back from storage in slices, and one device's backlog cannot take another's share.
   */
  private toLine(deviceId: string, key: string): boolean {
    if (this.queued.has(key) || this.inFlight.has(key)) return true
    const line = this.lines.get(deviceId) ?? []
    const { lineLimit, timetableCapacity } = this.deps.settings
    if (line.length >= lineLimit && this.queued.size >= timetableCapacity) {
      this.overflowed.set(deviceId, ++this.overflows)
      return false
    }
    line.push(key)
    this.lines.set(deviceId, line)
    this.queued.add(key)
    return true
  }

  /** Start the device's waiting deliveries while it has free slots; refill an overflowed line once half empty. */
  private pump(deviceId: string): void {
    const line = this.lines.get(deviceId)
    while (!this.closed && line && line.length > 0 && (this.busy.get(deviceId) ?? 0) < this.deps.settings.concurrencyPerDevice) {
      const key = line.shift()!
      this.queued.delete(key)
      this.launch(key, deviceId)
    }
    if (line?.length === 0) this.lines.delete(deviceId)
    if (this.overflowed.has(deviceId) && (line?.length ?? 0) <= this.deps.settings.lineLimit / 2) this.refill(deviceId)
  }

  private launch(key: string, deviceId: string): void {
    this.inFlight.add(key)
    this.busy.set(deviceId, (this.busy.get(deviceId) ?? 0) + 1)
    const run: Promise<void> = this.attempts
      .run(key, this.shutdown.signal)
      .catch(err => {
        this.deps.logger.error({ err, deviceId, key }, 'webhook attempt failed; retrying soon')
        return this.clock() + INTERNAL_RETRY_MS
      })
      .then(nextDue => {
        this.inFlight.delete(key)
        this.running.delete(run)
        const left = (this.busy.get(deviceId) ?? 1) - 1
        if (left > 0) this.busy.set(deviceId, left)
        else this.busy.delete(deviceId)
        if (nextDue !== undefined) this.enqueue(key, deviceId, nextDue)
        this.pump(deviceId)
      })
    this.running.add(run)
  }

  /** When a record is due for this process: its due time, or the end of a live lease held elsewhere. */
  private dueOf(record: OutboxRecord, now: number): number {
    return leaseHolds(record.lease, this.owner, now, this.deps.liveness) ? record.lease!.until : Number(record.dueAt) || now
  }

  /** The record when this instance schedules it: its own, or adopted now because its owner is gone; undefined when a live instance owns it. */
  private async mine(key: string, record: OutboxRecord): Promise<OutboxRecord | undefined> {
    if (record.owner === this.owner) return record
    if (this.deps.liveness.isAlive(record.owner)) return undefined
    return this.deps.store.adopt(key, this.deps.liveness)
  }

  /** Bring an overflowed device's records back: due ones into its line (until full), the others into the timetable. */
  private refill(deviceId: string): void {
    if (this.refilling.has(deviceId) || this.closed) return
    this.refilling.add(deviceId)
    const since = this.overflowed.get(deviceId)
    const run = (async () => {
      const now = this.clock()
      for await (const [key, found] of this.deps.store.ofDevice(deviceId)) {
        if (this.closed) return
        if (this.inFlight.has(key) || this.queued.has(key)) continue
        const record = await this.mine(key, found)
        if (!record) continue
        const due = this.dueOf(record, now)
        if (due > now) {
          this.timetable.add({ key, deviceId, due })
          continue
        }
        this.timetable.remove(key)
        if (!this.toLine(deviceId, key)) return // the line is full again: still overflowed
      }
      // Everything is in memory now, unless the line overflowed again while this scan ran.
      if (this.overflowed.get(deviceId) === since) this.overflowed.delete(deviceId)
    })().then(
      () => {
        this.refilling.delete(deviceId)
        this.pump(deviceId)
        this.arm()
      },
      err => {
        this.deps.logger.error({ err, deviceId }, 'loading the webhook backlog of a device failed; trying again soon')
        setTimeout(() => (this.refilling.delete(deviceId), this.pump(deviceId)), INTERNAL_RETRY_MS).unref()
      },
    )
    this.running.add(run)
    void run.finally(() => this.running.delete(run))
  }

  /** Rebuild the timetable from storage: at start-up, and when the clock reaches what was left out. */
  private reload(): Promise<void> {
    if (this.reloading) return this.reloading
    const run = async () => {
      this.timetable.beginReload()
      const now = this.clock()
      try {
        for await (const [key, found] of this.deps.store.pending()) {
          if (this.closed) return
          if (typeof found?.deviceId !== 'string' || this.overflowed.has(found.deviceId)) continue
          if (this.inFlight.has(key) || this.queued.has(key)) continue
          const record = await this.mine(key, found)
          if (record) this.timetable.add({ key, deviceId: record.deviceId, due: this.dueOf(record, now) })
        }
      } catch (err) {
        this.deps.logger.error({ err }, 'loading pending webhook deliveries failed; trying again soon')
        this.timetable.leaveOut(this.clock() + INTERNAL_RETRY_MS)
      }
    }
    this.reloading = run().finally(() => {
      this.reloading = undefined
      if (this.reloadAgain && !this.closed) {
        this.reloadAgain = false
        void this.reload()
      } else this.arm()
    })
    return this.reloading
  }
}
