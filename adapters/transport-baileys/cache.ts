import type { CacheStore } from '@whiskeysockets/baileys'
import { BoundedMap } from 'zapgate/adapter-kit'

/**
 * A Baileys CacheStore over a BoundedMap, for makeCacheableSignalKeyStore: one per device, reused across
 * reconnects (Baileys' default creates a NodeCache with an interval timer on every call).
 */
export function boundedCacheStore(limit: number, ttlMs: number): CacheStore {
  const map = new BoundedMap<string, unknown>(limit, ttlMs)
  return {
    get: <T>(key: string) => map.get(key) as T | undefined,
    set: <T>(key: string, value: T) => void map.set(key, value),
    del: (key: string) => map.delete(key),
    flushAll: () => map.clear(),
  }
}
