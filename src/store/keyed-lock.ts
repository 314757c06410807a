/** Serialises async work per key inside one process: `run(key, fn)` waits for earlier work on the same key. */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>()

  /** Run `fn` once every earlier `run` on `key` has settled; resolves or rejects with `fn`'s result. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve()
    const result = previous.then(fn, fn)
    const tail = result.then(
      () => undefined,
      () => undefined,
    )
    this.tails.set(key, tail)
    try {
      return await result
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key)
    }
  }

  /** Run `fn` holding every key (sorted, so that two callers never deadlock). */
  async runAll<T>(keys: string[], fn: () => Promise<T>): Promise<T> {
    const sorted = [...new Set(keys)].sort()
    const step = (i: number): Promise<T> => (i === sorted.length ? fn() : this.run(sorted[i], () => step(i + 1)))
    return step(0)
  }

  /** Number of keys with work queued (for tests and metrics). */
  get size(): number {
    return this.tails.size
  }
}
