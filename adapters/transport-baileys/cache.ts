import type { CacheStore } from '@whiskeysockets/baileys'
import { putBounded } from 'zapgate/adapter-kit'

/**
 * A Map with a size bound and an optional time-to-live: the oldest entry goes first when full, and an
 * expired entry reads as missing. Every per-device structure of the adapter uses one, so memory stays
 * bounded however long a session lives.
 */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, { value: V; expires: number }>()

  constructor(
    private readonly limit: number,
    private readonly ttlMs = Infinity,
  ) {}

  /** The value under `key`, or undefined when absent or expired. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key)
    if (!entry) return undefined
    if (entry.expires <= Date.now()) {
      this.entries.delete(key)
      return undefined
    }
    return entry.value
  }

  /** Whether `key` holds a live value. */
  has(key: K): boolean {
    return this.get(key) !== undefined
  }

  /** Store `value` (as the newest entry), evicting the oldest past the limit; `ttlMs` overrides the default. */
  set(key: K, value: V, ttlMs = this.ttlMs): void {
    putBounded(this.entries, key, { value, expires: Date.now() + ttlMs }, this.limit)
  }

  /** Remove `key`. */
  delete(key: K): void {
    this.entries.delete(key)
  }

  /** Remove everything. */
  clear(): void {
    this.entries.clear()
  }

  /** Entries held, expired ones included until they are read. */
  get size(): number {
    return this.entries.size
  }
}

/**
 * A Baileys CacheStore over a BoundedMap, for makeCacheableSignalKeyStore: one per device, reused across
 * reconnects (Baileys' default creates a NodeCache with an interval timer on every call).
 */
export function boundedCacheStore(limit: number, ttlMs: number): CacheStore {
  const map = new BoundedMap<string, unknown>(limit, ttlMs)
  return {
    get: <T>(key: string) => map.get(key) as T | undefined,
    set: <T>(key: string, value: T) => map.set(key, value),
    del: (key: string) => map.delete(key),
    flushAll: () => map.clear(),
  }
}
