import type { AtomicStorage } from '../../src/ports/storage.ts'
import { jsonEqual } from '../../src/store/json-equal.ts'

/** One process's Map-backed store: the entries several memoryStorage views may share. */
type Entries = Map<string, { value: unknown; expires?: number }>

/** The test Map storage: an AtomicStorage plus its entry count and a second view on the same entries. */
export type MemoryStorage = AtomicStorage & {
  readonly size: number
  /** Another Storage object on the same entries (a second "connection" to this backend). */
  connectAgain(): MemoryStorage
}

/**
 * A Map-based Storage for tests (the Keyv adapter is the real one): values are deep-copied in and
 * out, as a serialising store would, and `ttlMs` expires them. Its atomic steps are each one
 * synchronous Map step, so they are atomic within this process.
 */
export function memoryStorage(entries: Entries = new Map()): MemoryStorage {
  const live = (key: string) => {
    const entry = entries.get(key)
    if (entry?.expires !== undefined && entry.expires <= Date.now()) entries.delete(key)
    return entries.get(key)
  }
  const put = (key: string, value: unknown, ttlMs?: number) => {
    entries.set(key, { value: structuredClone(value), ...(ttlMs ? { expires: Date.now() + ttlMs } : {}) })
  }
  return {
    async get<T>(key: string) {
      const entry = live(key)
      return entry === undefined ? undefined : (structuredClone(entry.value) as T)
    },
    async set(key, value, ttlMs) {
      put(key, value, ttlMs)
    },
    async delete(key) {
      return live(key) !== undefined && entries.delete(key)
    },
    async *list<T>(prefix: string): AsyncIterable<[string, T]> {
      for (const key of [...entries.keys()]) {
        const entry = key.startsWith(prefix) ? live(key) : undefined
        if (entry) yield [key, structuredClone(entry.value) as T]
      }
    },
    async add(key, value, ttlMs) {
      if (live(key) !== undefined) return false
      put(key, value, ttlMs)
      return true
    },
    async compareAndSet(key, expected, next, ttlMs) {
      if (next === undefined) throw new TypeError('compareAndSet: next must not be undefined (use deleteIfEqual)')
      const entry = live(key)
      if (expected === undefined ? entry !== undefined : entry === undefined || !jsonEqual(entry.value, expected)) return false
      put(key, next, ttlMs)
      return true
    },
    async deleteIfEqual(key, expected) {
      if (expected === undefined) throw new TypeError('deleteIfEqual: expected must not be undefined')
      const entry = live(key)
      return entry !== undefined && jsonEqual(entry.value, expected) && entries.delete(key)
    },
    async increment(key, by, ttlMs) {
      if (!Number.isSafeInteger(by)) throw new TypeError(`increment: by must be a safe integer, got ${by}`)
      const entry = live(key)
      if (entry === undefined) {
        put(key, by, ttlMs)
        return by
      }
      if (!Number.isSafeInteger(entry.value)) throw new TypeError(`increment(${JSON.stringify(key)}): the stored value is not an integer`)
      const sum = (entry.value as number) + by
      if (!Number.isSafeInteger(sum)) throw new RangeError(`increment(${JSON.stringify(key)}): ${entry.value} + ${by} is not a safe integer`)
      entry.value = sum
      return entry.value as number
    },
    get size() {
      return entries.size
    },
    connectAgain: () => memoryStorage(entries),
  }
}
