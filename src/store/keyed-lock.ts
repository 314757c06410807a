import { supportsAtomic, type AtomicStorage, type Storage } from '../ports/storage.ts'
import { jsonEqual } from './json-equal.ts'

/** Serialises async work per key inside one process: `run(key, fn)` waits for earlier work on the same key. */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>()

  /** Run `fn` once every earlier `run` on `key` has settled; resolves or rejects with `fn`'s result. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve()
    const result = previous.then(fn, fn)
    const tail = result.catch(() => undefined)
    this.tails.set(key, tail)
    try {
      return await result
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key)
    }
  }

  /** Keys with work queued. */
  get size(): number {
    return this.tails.size
  }
}

type AtomicSteps = Pick<AtomicStorage, 'add' | 'compareAndSet' | 'deleteIfEqual'> & { increment(key: string, by: number): Promise<number> }

/** The storage's atomic steps, or (for a storage without them) the same steps under an in-process lock: correct for one process (increment takes no ttl: a plain Storage cannot keep an entry's expiry). */
export function atomicSteps(storage: Storage): AtomicSteps {
  if (supportsAtomic(storage)) return storage
  let steps = lockedSteps.get(storage)
  if (steps) return steps
  const lock = new KeyedLock()
  const step = <R>(key: string, fn: (current: unknown) => Promise<R>) => lock.run(key, async () => fn(await storage.get(key)))
  const write = async (key: string, value: unknown, ttlMs?: number) => (await storage.set(key, value, ttlMs), true)
  steps = {
    add: (key, value, ttlMs) => step(key, async current => current === undefined && write(key, value, ttlMs)),
    compareAndSet: (key, expected, next, ttlMs) =>
      step(
        key,
        async current => (expected === undefined ? current === undefined : current !== undefined && jsonEqual(current, expected)) && write(key, next, ttlMs),
      ),
    deleteIfEqual: (key, expected) => step(key, async current => current !== undefined && jsonEqual(current, expected) && storage.delete(key)),
    increment: (key, by) =>
      step(key, async current => {
        if (current !== undefined && !Number.isInteger(current)) throw new TypeError(`increment(${JSON.stringify(key)}): the stored value is not an integer`)
        const value = ((current as number | undefined) ?? 0) + by
        await storage.set(key, value)
        return value
      }),
  }
  lockedSteps.set(storage, steps)
  return steps
}

const lockedSteps = new WeakMap<Storage, AtomicSteps>()
