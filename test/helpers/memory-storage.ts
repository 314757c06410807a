import type { Storage } from '../../src/ports/storage.ts'

/**
 * A Map-based Storage for tests (the Keyv adapter is the real one): values are deep-copied in and
 * out, as a serialising store would, and `ttlMs` expires them.
 */
export function memoryStorage(): Storage & { readonly size: number } {
  const entries = new Map<string, { value: unknown; expires?: number }>()
  const live = (key: string) => {
    const entry = entries.get(key)
    if (entry?.expires !== undefined && entry.expires <= Date.now()) entries.delete(key)
    return entries.get(key)
  }
  return {
    async get<T>(key: string) {
      const entry = live(key)
      return entry === undefined ? undefined : (structuredClone(entry.value) as T)
    },
    async set(key, value, ttlMs) {
      entries.set(key, { value: structuredClone(value), ...(ttlMs ? { expires: Date.now() + ttlMs } : {}) })
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
    get size() {
      return entries.size
    },
  }
}
