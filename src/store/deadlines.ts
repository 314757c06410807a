/** One time limit for many async calls: each watched call fails once it has been pending for `limitMs`. */
export class Deadlines {
  private readonly pending = new Map<() => void, NodeJS.Timeout>()

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
    const expire = () => {
      if (this.pending.delete(expire)) onExpiry()
    }
    // Judged after the loop's poll phase (setImmediate): after a stall, answers already on a socket settle first.
    const timer = setTimeout(() => setImmediate(expire), this.limitMs)
    this.pending.set(expire, timer)
    return () => {
      clearTimeout(this.pending.get(expire))
      this.pending.delete(expire)
    }
  }

  /** Fail every call being watched now, oldest first (the thing they wait on is known not to answer). */
  expireAll(): void {
    for (const [expire, timer] of [...this.pending]) {
      clearTimeout(timer)
      expire()
    }
  }
}
