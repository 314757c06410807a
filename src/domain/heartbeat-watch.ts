/** A monotonic clock in milliseconds (never jumps with the wall clock; not comparable across processes). */
type MonotonicClock = () => number

/** This process's monotonic clock. */
export const monotonicNow: MonotonicClock = () => performance.now()

/**
 * Judges other instances alive by seeing their heartbeat counters move, timed by this process's
 * monotonic clock (no host's clock is compared with another's): an instance is silent once its
 * counter has stayed the same for `ttlMs`, watched without a gap. After a gap in watching (longer
 * than half the time-to-live and two heartbeats) the watch starts again.
 */
export class HeartbeatWatch {
  /** Per instance, the counter value last read and when it was first read. */
  private readonly seen = new Map<string, { beat: number; since: number }>()
  private lastRead: number | undefined

  constructor(
    private readonly ttlMs: number,
    private readonly heartbeatMs: number,
    private readonly now: MonotonicClock = monotonicNow,
  ) {}

  /** One full read of the registry (`beats`: id to counter): the ids whose counter has not moved for `ttlMs`. */
  observe(beats: Map<string, number>): string[] {
    const now = this.now()
    const gap = this.lastRead === undefined || now - this.lastRead > Math.max(2 * this.heartbeatMs, this.ttlMs / 2)
    this.lastRead = now
    const silent: string[] = []
    for (const [id, beat] of beats) {
      const seen = this.seen.get(id)
      if (!seen || seen.beat !== beat) this.seen.set(id, { beat, since: now })
      else if (gap) seen.since = now
      else if (now - seen.since >= this.ttlMs) silent.push(id)
    }
    for (const id of [...this.seen.keys()]) if (!beats.has(id)) this.seen.delete(id)
    return silent
  }

  /** Whether a record just read with counter `beat` is still the one watched silent for `ttlMs`. */
  stillSilent(id: string, beat: number): boolean {
    const seen = this.seen.get(id)
    return seen !== undefined && seen.beat === beat && this.now() - seen.since >= this.ttlMs
  }
}

/**
 * This instance's own side of the heartbeat: fenced once two thirds of the time-to-live have passed
 * since the last heartbeat the store took was sent (so it lets go a third of the time-to-live before
 * anyone may judge it gone); lifted only by a heartbeat that reached the store in time.
 */
export class HeartbeatFence {
  private lastSent: number
  private fenced = false
  private fences = 0

  constructor(
    private readonly ttlMs: number,
    private readonly now: MonotonicClock = monotonicNow,
  ) {
    this.lastSent = now()
  }

  /** Whether the fence is up: the heartbeat is late (even before a tick raised it), or none since reached the store. */
  get up(): boolean {
    return this.fenced || this.now() - this.lastSent >= this.limitMs
  }

  /** Fences so far: a step that began at one count and ended at another was cut by a fence. */
  get count(): number {
    return this.fences
  }

  /** Raise the fence when the heartbeat is late; true when this call raised it. */
  raiseIfLate(): boolean {
    if (this.fenced || this.now() - this.lastSent < this.limitMs) return false
    this.fenced = true
    this.fences++
    return true
  }

  /** A heartbeat sent at `sentAt` (from `now()`) reached the store: the fence lifts unless it waited past the limit on the way. */
  taken(sentAt: number): void {
    this.lastSent = sentAt
    if (this.now() - sentAt < this.limitMs) this.fenced = false
  }

  private get limitMs(): number {
    return (this.ttlMs * 2) / 3
  }
}
