/** This process's monotonic clock in ms (never jumps with the wall clock; not comparable across processes). */
export const monotonicNow = () => performance.now()

/**
 * Judges other instances alive by seeing their heartbeat counters move, timed by this process's monotonic clock: silent
 * once a counter stayed the same for `ttlMs`, watched without a gap (longer than ttl/2 and two heartbeats: the watch restarts).
 */
export class HeartbeatWatch {
  /** Per instance, the counter value last read and when it was first read. */
  private readonly seen = new Map<string, { beat: number; since: number }>()
  private lastRead: number | undefined

  constructor(
    private readonly ttlMs: number,
    private readonly heartbeatMs: number,
    private readonly now = monotonicNow,
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
