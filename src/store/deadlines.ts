/**
 * Time limits for many short async calls at once. A `setTimeout` plus `Promise.race` per call costs
 * more than the storage read it guards (a timer inserted and removed, three promises); here a call
 * joins a set, and one interval, running only while calls are pending, fails those past their
 * deadline. A call may overrun its limit by up to one sweep (a tenth of the limit, at most 250 ms).
 */
export class Deadlines {
  private readonly pending = new Set<Pending>()
  private sweeper: NodeJS.Timeout | undefined
  private readonly sweepMs: number

  /** Calls given to `run` fail with `onTimeout()` once pending for `limitMs`. */
  constructor(private readonly limitMs: number) {
    this.sweepMs = Math.max(1, Math.min(250, Math.floor(limitMs / 10)))
  }

  /** Settle like `work`, or reject with `timeoutError()` once the limit has passed. */
  run<T>(work: Promise<T>, timeoutError: () => Error): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const done = this.watch(() => reject(timeoutError()))
      work.then(
        value => {
          done()
          resolve(value)
        },
        error => {
          done()
          reject(error)
        },
      )
    })
  }

  /** Call `onExpiry` once the limit has passed, unless the answered function is called first. */
  watch(onExpiry: () => void): () => void {
    const entry: Pending = { expiresAt: Date.now() + this.limitMs, fail: onExpiry }
    this.pending.add(entry)
    this.sweeper ??= setInterval(() => this.sweep(), this.sweepMs)
    return () => void this.pending.delete(entry)
  }

  /**
   * Fail the first call past its deadline, then look again on the next turn of the event loop: each
   * failure's consequences (a queue moving on to its next job) play out before the next one is
   * judged, as with one timer per call.
   */
  private sweep(): void {
    // One limit for all: calls expire in the order they joined, so the oldest is the only candidate.
    const oldest = this.pending.values().next().value
    if (oldest && oldest.expiresAt <= Date.now()) {
      this.pending.delete(oldest)
      oldest.fail()
      setImmediate(() => this.sweep())
      return
    }
    // Idle: stop until the next call, so an idle gateway holds no timer (and lets the process exit).
    if (this.pending.size === 0) {
      clearInterval(this.sweeper)
      this.sweeper = undefined
    }
  }
}

interface Pending {
  expiresAt: number
  fail(): void
}
