/**
 * Many pending calls cancelled together (a shutdown), without an AbortSignal listener per call:
 * creating an AbortController and listening to its signal cost ~40 µs a call in Node 20, more than a
 * webhook POST over keep-alive.
 */
export class Cancellation {
  private readonly pending = new Set<(reason: unknown) => void>()
  private reason: unknown
  private cancelled = false

  /** Settle like `work`, or reject with the reason as soon as cancel() is called. */
  run<T>(work: Promise<T>): Promise<T> {
    if (this.cancelled) {
      work.catch(() => {}) // nobody waits for it any more: its failure must not become an unhandled rejection
      return Promise.reject(this.reason)
    }
    return new Promise<T>((resolve, reject) => {
      this.pending.add(reject)
      work.then(
        value => {
          this.pending.delete(reject)
          resolve(value)
        },
        error => {
          this.pending.delete(reject)
          reject(error)
        },
      )
    })
  }

  /** Reject every pending run (and every later one) with `reason`. */
  cancel(reason: unknown): void {
    this.cancelled = true
    this.reason = reason
    for (const reject of this.pending) reject(reason)
    this.pending.clear()
  }
}
