/**
 * Time limits for many short async calls at once. A `setTimeout` plus `Promise.race` per call costs
 * more than the storage read it guards (a timer inserted and removed, three promises); here a call
 * joins a list, and one interval, running only while calls are pending, fails those past their
 * deadline. A call may overrun its limit by up to one sweep (a tenth of the limit, at most 250 ms).
 *
 * One limit for all, so calls expire in the order they joined: the list is kept in that order and
 * only its head is ever a candidate. An answered call is marked (no hashing per call) and dropped
 * as soon as no older call is pending; the sweep compacts the list when answered calls pile up
 * behind one that takes long.
 */
export class Deadlines {
  private entries: (Pending | undefined)[] = []
  private head = 0
  private live = 0
  private sweeper: NodeJS.Timeout | undefined
  private readonly sweepMs: number

  /** Calls given to `run` fail with `onTimeout()` once pending for `limitMs`. */
  constructor(private readonly limitMs: number) {
    this.sweepMs = Math.max(1, Math.min(250, Math.floor(limitMs / 10)))
  }

  /** Calls being watched (neither answered nor expired). */
  get size(): number {
    return this.live
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
    const entry: Pending = { expiresAt: Date.now() + this.limitMs, fail: onExpiry, done: false }
    this.entries.push(entry)
    this.live++
    // Judged after the loop's poll phase (setImmediate): after a stall, answers already on a socket settle first.
    this.sweeper ??= setInterval(() => setImmediate(() => this.sweep()), this.sweepMs)
    return () => {
      if (entry.done) return
      entry.done = true
      this.live--
      if (this.entries[this.head] === entry) this.dropAnswered()
    }
  }

  /** Fail every call being watched now, oldest first (the thing they wait on is known not to answer). */
  expireAll(): void {
    const pending = this.entries
    const from = this.head
    this.entries = []
    this.head = 0
    for (let i = from; i < pending.length; i++) {
      const entry = pending[i]
      if (!entry || entry.done) continue
      entry.done = true
      this.live--
      entry.fail()
    }
  }

  /** Drop the answered entries at the head, so they die young; reuse the list once it is empty. */
  private dropAnswered(): void {
    const { entries } = this
    while (this.head < entries.length && entries[this.head]!.done) entries[this.head++] = undefined
    if (this.head === entries.length) {
      entries.length = 0
      this.head = 0
    } else if (this.head >= 1024) {
      entries.copyWithin(0, this.head)
      entries.length -= this.head
      this.head = 0
    }
  }

  /**
   * Fail the first call past its deadline, then look again on the next turn of the event loop: each
   * failure's consequences (a queue moving on to its next job) play out before the next one is
   * judged, as with one timer per call.
   */
  private sweep(): void {
    this.dropAnswered()
    const { entries } = this
    const oldest = entries[this.head]
    if (oldest && oldest.expiresAt <= Date.now()) {
      entries[this.head++] = undefined
      oldest.done = true
      this.live--
      oldest.fail()
      setImmediate(() => this.sweep())
      return
    }
    if (this.live === 0) {
      // Idle: stop until the next call, so an idle gateway holds no timer (and lets the process exit).
      this.entries = []
      this.head = 0
      clearInterval(this.sweeper)
      this.sweeper = undefined
    } else if (entries.length - this.head > 2 * this.live + 1024) {
      this.entries = entries.filter((entry, i): entry is Pending => i >= this.head && !entry!.done)
      this.head = 0
    }
  }
}

interface Pending {
  expiresAt: number
  fail(): void
  done: boolean
}
