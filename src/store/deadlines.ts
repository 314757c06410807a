/** One time limit for many async calls: each watched call fails once it has been pending for `limitMs`. One timer serves them all (the calls share the limit, so the oldest is always the next to expire): watching and answering a call is a Map entry, not a timer each. */
export class Deadlines {
  /** The calls being watched, oldest first, each with the moment it expires (performance.now()). */
  private readonly pending = new Map<number, { expiresAt: number; onExpiry: () => void }>()
  private nextKey = 0
  /** Armed for the oldest call's expiry; unref'd while no call is watched, so an idle Deadlines holds no process open. */
  private timer: NodeJS.Timeout | undefined

  constructor(private readonly limitMs: number) {}

  /** Calls being watched (neither answered nor expired). */
  get size(): number {
    return this.pending.size
  }

  /** Settle like `work`, or reject with `timeoutError()` once the limit has passed. */
  run<T>(work: Promise<T>, timeoutError: () => Error): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const done = this.watch(() => reject(timeoutError()))
      work.then(
        value => (done(), resolve(value)),
        (err: unknown) => (done(), reject(err)),
      )
    })
  }

  /** Call `onExpiry` once the limit has passed, unless the answered function is called first. */
  watch(onExpiry: () => void): () => void {
    const key = this.nextKey++
    if (this.pending.size === 0) this.timer?.ref()
    this.pending.set(key, { expiresAt: performance.now() + this.limitMs, onExpiry })
    if (!this.timer) this.arm(this.limitMs)
    return () => void (this.pending.delete(key) && this.pending.size === 0 && this.timer?.unref())
  }

  /** Fail every call being watched now, oldest first (the thing they wait on is known not to answer). */
  expireAll(): void {
    for (const [key, call] of [...this.pending]) if (this.pending.delete(key)) call.onExpiry()
    this.settle()
  }

  private arm(ms: number): void {
    // Judged after the loop's poll phase (setImmediate): after a stall, answers already on a socket settle first. A timer replaced meanwhile (expireAll, then watch) judges nothing. Past setTimeout's 24.8 days it fires early and re-arms (else 1 ms, over and over).
    const timer: NodeJS.Timeout = (this.timer = setTimeout(() => setImmediate(() => this.timer === timer && this.expireDue(timer)), Math.min(ms, 2 ** 31 - 1)))
  }

  /** Fail the calls past their limit, oldest first, then wait for the next oldest. */
  private expireDue(fired: NodeJS.Timeout): void {
    const now = performance.now()
    try {
      for (const [key, call] of this.pending) {
        if (call.expiresAt > now) break
        this.pending.delete(key)
        call.onExpiry()
      }
    } finally {
      if (this.timer === fired) this.timer = undefined // only now (a call watched by an onExpiry above waits for the re-arm below), and even past a throw
      this.settle()
    }
  }

  /** Re-arm the timer for the oldest call still watched (none: no timer). */
  private settle(): void {
    const oldest = this.pending.values().next()
    if (!oldest.done) return void (this.timer ?? this.arm(Math.max(1, Math.ceil(oldest.value.expiresAt - performance.now()))))
    this.timer = void clearTimeout(this.timer)
  }
}

/** `work()`'s promise, or a rejected one when it throws before returning one: as `new Promise(start => start(work()))` without a second promise and its two extra turns (Promise.resolve gives a native promise back as is; a plain value or a thenable, from a JavaScript adapter, is wrapped). */
export function invoke<T>(work: () => Promise<T>): Promise<T> {
  try {
    return Promise.resolve(work())
  } catch (err) {
    return Promise.reject(err)
  }
}
