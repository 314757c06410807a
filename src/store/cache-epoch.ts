import type { Logger } from '../logger.ts'
import type { Storage } from '../ports/storage.ts'
import { atomicSteps } from './keyed-lock.ts'

/** The cache epoch of a store (see cacheEpoch). */
export type CacheEpoch = ReturnType<typeof cacheEpoch>

const KEY = 'cache-epoch'

/** Keeps every process's record caches honest: a write others must see at once bumps a counter in the store, which each process polls every `pollMs`. */
export function cacheEpoch(storage: Storage, pollMs: number, logger: Logger) {
  const caches: { forget(): void }[] = []
  let seen: unknown
  let timer: NodeJS.Timeout | undefined
  let polling = false
  const forgetAll = () => caches.forEach(cache => cache.forget())
  const poll = async () => {
    if (polling) return
    polling = true
    try {
      const now = await storage.get(KEY)
      if (now !== seen) {
        seen = now
        forgetAll()
      }
    } catch (err) {
      logger.debug({ err }, 'cache epoch not read; cached records are kept for their ttl')
    } finally {
      polling = false
    }
  }
  return {
    /** Drop `cache`'s records whenever another process bumps the epoch. */
    register: (cache: { forget(): void }): void => void caches.push(cache),
    /** Read the current epoch and start polling it. */
    async start(): Promise<void> {
      seen = await storage.get(KEY)
      timer = setInterval(() => void poll(), pollMs)
      timer.unref()
    },
    /** Tell every process (this one at once) that cached records may be stale. */
    async bump(): Promise<void> {
      forgetAll()
      const before = seen
      const now = await atomicSteps(storage).increment(KEY, 1)
      // Another process bumped it meanwhile (its value skipped): what was cached since the forget above may predate its change.
      if (now !== (typeof before === 'number' ? before : 0) + 1) forgetAll()
      seen = now
    },
    /** Stop polling. */
    stop: (): void => clearInterval(timer),
  }
}
