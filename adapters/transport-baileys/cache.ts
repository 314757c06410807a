import type { CacheStore } from '@whiskeysockets/baileys'
import { putBounded } from 'zapgate/adapter-kit'

/**
 * The signal key caches of every device of the process, under one bound (entries, oldest out first)
 * and one time-to-live, swept in the background so that an idle device holds nothing after it:
 * Baileys' `makeCacheableSignalKeyStore` over a device's `view()`. Pre-keys are never kept. A
 * device generates 812 of them at its first login and uploads them; each is read once, when a
 * contact's first message (a pkmsg) arrives, and Baileys then deletes it: that read goes to the
 * store. Kept per device (5,000 entries each) they were about half of a linked device's heap.
 * Sessions, sender keys, identities and the rest stay hot for `ttlMs` after their last write or
 * store read.
 */
export class SignalKeyCache {
  private readonly entries = new Map<string, { value: unknown; expires: number }>()
  private views = 0
  private sweeper?: NodeJS.Timeout

  constructor(
    /** Entries across all devices. */
    readonly limit: number,
    readonly ttlMs: number,
  ) {}

  /** Entries held (expired ones until the next sweep). */
  get size(): number {
    return this.entries.size
  }

  /** One device's CacheStore: its keys apart from the other devices', its `flushAll` only its own. */
  view(): CacheStore {
    const prefix = `${++this.views}:`
    this.sweeper ??= setInterval(() => this.sweep(), Math.max(1_000, Math.min(this.ttlMs, 60_000))).unref()
    return {
      get: <T>(key: string) => this.get(prefix + key) as T | undefined,
      set: <T>(key: string, value: T) => this.set(prefix + key, key, value),
      del: (key: string) => void this.entries.delete(prefix + key),
      flushAll: () => {
        for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.entries.delete(key)
      },
    }
  }

  /** Drop every expired entry (the map is in expiry order: each write moves its key to the end). */
  sweep(now = Date.now()): void {
    for (const [key, entry] of this.entries) {
      if (entry.expires > now) return
      this.entries.delete(key)
    }
  }

  /** Drop every entry of every device (the stores behind keep them all). */
  clear(): void {
    this.entries.clear()
  }

  /** Stop the background sweep (it never keeps the process alive either way). */
  close(): void {
    clearInterval(this.sweeper)
    this.sweeper = undefined
  }

  // --- Internal helpers ---

  private get(key: string): unknown {
    const entry = this.entries.get(key)
    if (!entry) return undefined
    if (entry.expires > Date.now()) return entry.value
    this.entries.delete(key)
    return undefined
  }

  /** Keep `value` unless it is a pre-key (`<type>.<id>` keys, as Baileys names them). */
  private set(key: string, baileysKey: string, value: unknown): void {
    if (baileysKey.startsWith('pre-key.')) this.entries.delete(key)
    else putBounded(this.entries, key, { value, expires: Date.now() + this.ttlMs }, this.limit)
  }
}

/**
 * The process's signal key cache: 30,000 entries in all (about 30 per device at 1,000 linked devices
 * each sending and receiving a message a minute, which touches a few sessions and identities), 5 minutes.
 */
export const signalKeyCache = new SignalKeyCache(30_000, 5 * 60_000)
