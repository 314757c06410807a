import type { Logger } from '../logger.ts'
import type { Storage } from '../ports/storage.ts'
import { atomicSteps } from './keyed-lock.ts'

const KEY = 'cache-epoch'

/** Keeps every process's record caches honest: a write others must see at once bumps a counter in the store, which each process polls every `pollMs`. */
export class CacheEpoch {
  private readonly caches: { forget(): void }[] = []
  private seen: unknown
  private timer: NodeJS.Timeout | undefined
  private polling = false

  constructor(
    private readonly storage: Storage,
    private readonly pollMs: number,
    private readonly logger: Logger,
  ) {}

  /** Drop `cache`'s records whenever another process bumps the epoch. */
  register(cache: { forget(): void }): void {
    this.caches.push(cache)
  }

  /** Read the current epoch and start polling it. */
  async start(): Promise<void> {
    this.seen = await this.storage.get(KEY)
    this.timer = setInterval(() => void this.poll(), this.pollMs)
    this.timer.unref()
  }

  /** Tell every process (this one at once) that cached records may be stale. */
  async bump(): Promise<void> {
    this.forgetAll()
    this.seen = await atomicSteps(this.storage).increment(KEY, 1)
  }

  stop(): void {
    clearInterval(this.timer)
  }

  private async poll(): Promise<void> {
    if (this.polling) return
    this.polling = true
    try {
      const now = await this.storage.get(KEY)
      if (now !== this.seen) {
        this.seen = now
        this.forgetAll()
      }
    } catch (err) {
      this.logger.debug({ err }, 'cache epoch not read; cached records are kept for their ttl')
    } finally {
      this.polling = false
    }
  }

  private forgetAll(): void {
    for (const cache of this.caches) cache.forget()
  }
}
