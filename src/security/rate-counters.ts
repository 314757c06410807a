import type { Logger } from '../logger.ts'
import { reachOf, supportsAtomic, type AtomicStorage, type Storage } from '../ports/storage.ts'
import { Deadlines } from '../store/deadlines.ts'
import { hashKey } from './keys.ts'
import { LocalCounters } from './local-counters.ts'

/** A limit: `points` per `duration` seconds. */
export interface RateRule {
  points: number
  duration: number
}

/** A counter in its current window. */
export interface WindowCount {
  /** What was counted in the window (this call's step included, for `hit`). */
  count: number
  /** Seconds until the window ends, at least 1: the Retry-After of a refusal. */
  retryAfterSeconds: number
}

/** Counters this process keeps per level of LocalCounters when they are not in the store (50,000 in all). */
const LOCAL_COUNTERS_PER_LEVEL = 5_000
/** A store call longer than this lets the request through. */
const STORE_DEADLINE_MS = 1000
/** At most one "store failed" warning per this many ms (a store outage would otherwise log every request). */
const WARNING_INTERVAL_MS = 10_000

/**
 * Fixed-window request counters. A counter is named by its rule and what it counts (an authkey, a
 * client IP, ...), hashed: its key `ratelimit:<rule>:<digest>` holds no key material. Each
 * counter's windows are `duration` long, offset by a value drawn from its digest (so that windows of
 * different counters do not all end at once), the same in every process whose clock is right.
 *
 * On a store every instance reaches (`reach: 'network'`: Redis, PostgreSQL) with the atomic steps,
 * a count is one `increment` whose ttl ends with the window (the first count of a window creates
 * the entry), so every process on that store counts together. Otherwise (memory, SQLite: one process at a time) counters live in
 * this process's memory, bounded so that spraying made-up keys cannot push out a limited key's
 * count (see LocalCounters). A store that fails or does not answer within a second counts
 * nothing: the call answers undefined and the request goes through (logged), so a store outage
 * never takes the API down with it.
 */
export class WindowCounters {
  private readonly shared: AtomicStorage | undefined
  private readonly local = new LocalCounters(LOCAL_COUNTERS_PER_LEVEL)
  private readonly deadlines = new Deadlines(STORE_DEADLINE_MS)
  private warnedAt = 0
  private unwarned = 0

  constructor(
    storage: Storage,
    private readonly logger: Logger,
  ) {
    this.shared = reachOf(storage) === 'network' && supportsAtomic(storage) ? storage : undefined
  }

  /** Count one for `what` under the rule `name`; undefined when the store failed or was late. */
  async hit(name: string, rule: RateRule, what: readonly string[]): Promise<WindowCount | undefined> {
    const window = windowOf(name, rule, what, Date.now())
    if (!this.shared) {
      const count = this.local.add(window.key, rule.points, window.ttlMs)
      return { count, retryAfterSeconds: window.retryAfterSeconds }
    }
    const count = await this.guard(shared => shared.increment(window.key, 1, window.ttlMs))
    return count === FAILED ? undefined : { count, retryAfterSeconds: window.retryAfterSeconds }
  }

  /** The count of `what` under the rule `name` in the current window, without counting; undefined when the store failed or was late. */
  async peek(name: string, rule: RateRule, what: readonly string[]): Promise<WindowCount | undefined> {
    const window = windowOf(name, rule, what, Date.now())
    if (!this.shared) return { count: this.local.count(window.key), retryAfterSeconds: window.retryAfterSeconds }
    const stored = await this.guard(shared => shared.get<unknown>(window.key))
    if (stored === FAILED) return undefined
    return { count: typeof stored === 'number' ? stored : 0, retryAfterSeconds: window.retryAfterSeconds }
  }

  // --- Internal helpers ---

  /** A store call's answer, or FAILED when it failed or took longer than a second (logged, at most once per 10 s). */
  private async guard<T>(call: (store: AtomicStorage) => Promise<T>): Promise<T | typeof FAILED> {
    try {
      return await this.deadlines.run(call(this.shared!), () => new LateStoreError())
    } catch (err) {
      this.unwarned++
      const now = Date.now()
      if (now - this.warnedAt >= WARNING_INTERVAL_MS) {
        const late = err instanceof LateStoreError
        this.logger.warn(
          { ...(late ? {} : { err }), uncounted: this.unwarned },
          late
            ? 'rate-limit counter: the store did not answer within a second; request let through'
            : 'rate-limit counter: the store failed; request let through',
        )
        this.warnedAt = now
        this.unwarned = 0
      }
      return FAILED
    }
  }
}

// --- Internal helpers ---

/**
 * The current window of a counter: its store key, when the window ends and the seconds left. Windows
 * are `duration` long and offset by a value drawn from the digest; the key is the same in every
 * window (its entry expires when its window ends and the next count starts it again), so a store
 * that keeps expired entries until they are read (SQL) holds one row per counter, not one per window.
 */
export function windowOf(name: string, rule: RateRule, what: readonly string[], now: number): { key: string; ttlMs: number; retryAfterSeconds: number } {
  const digest = hashKey(`${name}\n${what.join('\n')}`).slice(0, 32)
  const length = rule.duration * 1000
  const offset = parseInt(digest.slice(0, 8), 16) % length
  const end = Math.floor((now - offset) / length) * length + offset + length
  return { key: `ratelimit:${name}:${digest}`, ttlMs: Math.max(1, end - now), retryAfterSeconds: Math.max(1, Math.ceil((end - now) / 1000)) }
}

/** What a store call that failed or was late answers. */
const FAILED = Symbol('failed')

/** The store took longer than a second. */
class LateStoreError extends Error {}
