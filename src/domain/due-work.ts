import { setMaxListeners } from 'node:events'
import type { Logger } from '../logger.ts'
import { DueLines } from './due-lines.ts'
import { earlier, Timetable, type Entry } from './timetable.ts'

/** One kind of stored due work (webhook events, scheduled messages): its policy; `what` names it in the logs. */
interface DuePolicy<R> {
  readonly what: string
  /** Every stored record (reloads), and one lane's (refills). */
  all(): AsyncIterable<[key: string, record: R]>
  ofLane(lane: string): AsyncIterable<[key: string, record: R]>
  laneOf(record: R): string
  /** Among a lane's records due at the same time, which runs first (lower first; absent: by key). */
  orderOf?(record: R): number
  /** When this process should run a stored record; undefined when it is not its to run. */
  dueOf(key: string, record: R, now: number): Promise<number | undefined>
  /** Run the work once (the retry hook): when to run it again, or undefined when done. */
  run(key: string, lane: string, shutdown: AbortSignal): Promise<number | undefined>
}

/** The engine's limits: runs per lane, lanes at once, timetable entries, keys waiting per lane (more while all lines hold fewer than `capacity`), rescan period, close()'s wait for runs in flight (default 2 s). */
export interface DueSettings {
  concurrencyPerLane: number
  maxLanes?: number
  capacity: number
  lineLimit: number
  reconcileMs: number
  closeGraceMs?: number
}

/** The abort reason of runs cut short by close(). */
export class ShutdownAbort extends Error {
  constructor() {
    super('the gateway is closing')
    this.name = 'ShutdownAbort'
  }
}

/** Longest single timer; retry after an internal failure (the store unreachable); close()'s default grace for runs in flight. */
const [MAX_TIMER_MS, INTERNAL_RETRY_MS, CLOSE_GRACE_MS] = [3_600_000, 5_000, 2_000]

/** Runs stored due work in per-lane (per-device) lines under a bounded timetable; what does not fit waits in storage, refilled, reloaded and rescanned (docs/architecture.md). */
export class DueWork<R> {
  private readonly timetable: Timetable
  private readonly lines = new DueLines()
  /** Lanes with due work in storage only, with the number of their last overflow. */
  private readonly overflowed = new Map<string, number>()
  private overflows = 0
  private readonly refilling = new Set<string>()
  /** Lanes whose asked read (refresh) is under way: none of their work starts until what it finds took its place in the line. */
  private readonly holding = new Set<string>()
  /** Each lane's read under way, and the one more read asked (refresh) while it was. */
  private readonly refills = new Map<string, Promise<void>>()
  private readonly refreshes = new Map<string, Promise<void>>()
  private readonly inFlight = new Set<string>()
  private readonly askedAgain = new Map<string, number>() // keys enqueued while their run was under way: run once it ends (the earlier due)
  private readonly busy = new Map<string, number>()
  private readonly running = new Set<Promise<unknown>>()
  private readonly shutdown = new AbortController()
  private readonly stopping = new AbortController()
  private timer?: NodeJS.Timeout
  private timerAt = Infinity
  private reconciler?: NodeJS.Timeout
  private reloading?: Promise<void>
  private reloadAgain = false
  private closed = false

  constructor(
    private readonly policy: DuePolicy<R>,
    private readonly settings: DueSettings,
    private readonly logger: Logger,
    private readonly clock: () => number = Date.now,
  ) {
    this.timetable = new Timetable(settings.capacity)
    setMaxListeners(0, this.shutdown.signal, this.stopping.signal)
  }

  /** Load the due work from storage and start running it; then rescan every `reconcileMs`. */
  start(): Promise<void> {
    if (!this.closed && !this.reconciler) {
      this.reconciler = setInterval(() => void (this.reloading ?? this.rescan()), this.settings.reconcileMs)
      this.reconciler.unref()
    }
    return this.rescan()
  }

  /** Whether a run of `key` is under way in this process. */
  isRunning(key: string): boolean {
    return this.inFlight.has(key)
  }

  /** Aborted (with a ShutdownAbort) as close() begins: a run under way starts nothing it could not finish within the grace (the shutdown signal aborts work under way, at the grace's end). */
  get closingSignal(): AbortSignal {
    return this.stopping.signal
  }

  /** A record found in storage that this process may not have scheduled: scheduled when it is its to run. */
  async track(key: string, record: R): Promise<void> {
    if (this.closed || this.inFlight.has(key) || this.lines.has(key)) return
    const due = await this.policy.dueOf(key, record, this.clock())
    if (due !== undefined) this.enqueue(key, this.policy.laneOf(record), due, this.policy.orderOf?.(record))
  }

  /** The work under `key` is due at `due` (`order`: which of the lane's work due then runs first); while a run of it is under way, once that run ends. */
  enqueue(key: string, lane: string, due: number, order?: number): void {
    if (this.closed || this.lines.has(key) || (this.inFlight.has(key) && this.askedAgain.set(key, Math.min(due, this.askedAgain.get(key) ?? due)))) return
    this.timetable.add({ key, lane, due, order })
    this.arm()
  }

  /** Forget what memory holds of a lane (its records are deleted by the caller). */
  forgetLane(lane: string): void {
    this.lines.forget(lane)
    this.overflowed.delete(lane)
  }

  /** Read a lane's records again now (their due times may have changed: a device just connected); asked while a read of the lane is under way (it may have read some records before the change), once more after it, resolving then. */
  refresh(lane: string): Promise<void> {
    const under = this.refills.get(lane)
    if (!under) return this.refill(lane, true)
    let again = this.refreshes.get(lane)
    if (!again) this.refreshes.set(lane, (again = under.then(() => (this.refreshes.delete(lane), this.refill(lane, true)))))
    return again
  }

  /** Rebuild the timetable from storage (once more when asked during a scan); nothing once closed (a start or a departure coming after close() reads no more). */
  rescan(): Promise<void> {
    if (this.closed) return Promise.resolve()
    if (this.reloading) {
      this.reloadAgain = true
      return this.reloading
    }
    this.reloading = this.reload().finally(() => {
      this.reloading = undefined
      if (this.reloadAgain && !this.closed) {
        this.reloadAgain = false
        void this.rescan()
      } else this.arm()
    })
    return this.reloading
  }

  /** Stop: no new runs; those in flight get a grace (`closeGraceMs`), then are aborted with a ShutdownAbort. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.stopping.abort(new ShutdownAbort())
    clearTimeout(this.timer)
    clearInterval(this.reconciler)
    let graceTimer: NodeJS.Timeout | undefined
    const grace = new Promise<void>(resolve => (graceTimer = setTimeout(resolve, this.settings.closeGraceMs ?? CLOSE_GRACE_MS)))
    await Promise.race([Promise.allSettled([...this.running]), grace])
    clearTimeout(graceTimer)
    this.shutdown.abort(new ShutdownAbort())
    await Promise.allSettled([...this.running])
    await this.reloading
  }

  /** Set the one timer for the earliest due entry (or a reload, when there is room or work left in storage is due before every entry held). */
  private arm(): void {
    if (this.closed) return
    const horizon = !this.reloading && this.shouldReload() ? this.timetable.horizon : Infinity
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
    const lanes = new Set<string>()
    for (const item of this.timetable.takeDue(now)) {
      this.toLine(item)
      lanes.add(item.lane)
    }
    for (const lane of lanes) this.pump(lane)
    if (this.timetable.horizon <= now && this.shouldReload() && !this.reloading) void this.rescan()
    else this.arm()
  }

  /** Whether half the timetable is free (reloads bring batches and stay rare), or what was left in storage is due before every entry held (the timetable filled up since with later work, retries: else it waited for the periodic rescan). */
  private shouldReload(): boolean {
    const { capacity, horizon } = this.timetable
    return capacity - this.timetable.size >= Math.max(1, Math.floor(capacity / 2)) || horizon < (this.timetable.peek()?.due ?? Infinity)
  }

  /** Put due work in its lane's line, in its place; false when full (the lane is marked overflowed, the key stays in storage). */
  private toLine(entry: Entry): boolean {
    if (this.lines.has(entry.key) || this.inFlight.has(entry.key)) return true
    if (this.lines.length(entry.lane) >= this.settings.lineLimit && this.lines.size >= this.settings.capacity) {
      this.overflowed.set(entry.lane, ++this.overflows)
      return false
    }
    this.lines.add(entry)
    return true
  }

  /** Start a lane's waiting keys while it has free slots; refill an overflowed lane once half empty. */
  private pump(lane: string): void {
    const { concurrencyPerLane, maxLanes = Infinity, lineLimit } = this.settings
    const free = () => (this.busy.get(lane) ?? 0) < concurrencyPerLane && (this.busy.has(lane) || this.busy.size < maxLanes)
    while (!this.closed && !this.holding.has(lane) && this.lines.length(lane) && free()) this.launch(this.lines.take(lane)!)
    if (this.overflowed.has(lane) && this.lines.length(lane) <= lineLimit / 2) void this.refill(lane)
  }

  /** Run one entry; what it answers (due again) keeps the entry's order: due already, straight back into its place in the line. */
  private launch(entry: Entry): void {
    const { key, lane } = entry
    this.inFlight.add(key)
    this.busy.set(lane, (this.busy.get(lane) ?? 0) + 1)
    const run: Promise<void> = this.policy
      .run(key, lane, this.shutdown.signal)
      .catch(err => {
        this.logger.error({ err, lane, key }, `${this.policy.what} run failed; retrying soon`)
        return this.clock() + INTERNAL_RETRY_MS
      })
      .then(nextDue => {
        this.inFlight.delete(key)
        this.running.delete(run)
        const [left, due] = [(this.busy.get(lane) ?? 1) - 1, Math.min(nextDue ?? Infinity, this.askedAgain.get(key) ?? Infinity)]
        if (left > 0) this.busy.set(lane, left)
        else this.busy.delete(lane)
        this.askedAgain.delete(key)
        if (due < Infinity && due <= this.clock() && !this.closed) this.toLine({ ...entry, due })
        else if (due < Infinity) this.enqueue(key, lane, due, entry.order)
        this.pump(lane)
        if (this.settings.maxLanes !== undefined) for (const waiting of this.lines.lanes()) this.pump(waiting)
      })
    this.running.add(run)
  }

  /** Read a lane's records: due ones into its line (the earliest, until full; the rest stays in storage, the lane overflowed), the others into the timetable. */
  private refill(lane: string, asked = false): Promise<void> {
    if (this.refilling.has(lane) || this.closed) return Promise.resolve()
    this.refilling.add(lane)
    if (asked) this.holding.add(lane)
    const since = this.overflowed.get(lane)
    const run = (async () => {
      const now = this.clock()
      // What is due already, in the timetable's order (the store lists in its own): the earliest the line can take now only (a batch, not the backlog).
      const room = Math.max(this.settings.lineLimit, this.settings.capacity)
      let [dueNow, leftOut] = [[] as Entry[], false]
      const earliest = () => void (dueNow.sort((a, b) => (earlier(a, b) ? -1 : 1)).length > room && ([dueNow, leftOut] = [dueNow.slice(0, room), true]))
      for await (const [key, record] of this.policy.ofLane(lane)) {
        if (this.closed) return
        if (this.inFlight.has(key) || this.lines.has(key)) continue
        const due = await this.policy.dueOf(key, record, now)
        if (due === undefined) continue
        const entry = { key, lane, due, order: this.policy.orderOf?.(record) }
        if (due > now) this.timetable.add(entry)
        else if (dueNow.push(entry) > 2 * room) earliest()
      }
      earliest()
      for (const entry of dueNow) if ((this.timetable.remove(entry.key), !this.toLine(entry))) return // the line is full again: still overflowed
      // Due work left in storage (leftOut): read again once the line is half empty.
      if (leftOut) this.overflowed.set(lane, ++this.overflows)
      else if (this.overflowed.get(lane) === since) this.overflowed.delete(lane)
    })().then(
      () => {
        this.refilling.delete(lane)
        this.holding.delete(lane)
        this.pump(lane)
        this.arm()
      },
      err => {
        this.logger.error({ err, lane }, `loading the ${this.policy.what} backlog of a lane failed; trying again soon`)
        if (this.holding.delete(lane)) this.pump(lane)
        setTimeout(() => (this.refilling.delete(lane), asked ? void this.refill(lane) : this.pump(lane)), INTERNAL_RETRY_MS).unref()
      },
    )
    this.running.add(run)
    this.refills.set(lane, run)
    void run.finally(() => (this.running.delete(run), this.refills.get(lane) === run && this.refills.delete(lane)))
    return run
  }

  private async reload(): Promise<void> {
    this.timetable.beginReload()
    const now = this.clock()
    try {
      for await (const [key, record] of this.policy.all()) {
        if (this.closed) return
        const lane = this.policy.laneOf(record)
        if (typeof lane !== 'string' || this.overflowed.has(lane) || this.inFlight.has(key) || this.lines.has(key)) continue
        const due = await this.policy.dueOf(key, record, now)
        if (due !== undefined) this.timetable.add({ key, lane, due, order: this.policy.orderOf?.(record) })
      }
    } catch (err) {
      this.logger.error({ err }, `loading pending ${this.policy.what} work failed; trying again soon`)
      this.timetable.leaveOut(this.clock() + INTERNAL_RETRY_MS)
    }
  }
}
