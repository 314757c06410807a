/**
 * The rate-limit store port: where request counters live. Its shapes are those of
 * rate-limiter-flexible, so any of that library's limiters (memory, Redis, PostgreSQL, ...) fits as
 * it is. The default keeps counters in this process's memory; a shared store (Redis) makes the
 * limits hold across several gateway processes.
 */

/** A key's counter in the current window. */
export interface RateLimitState {
  /** Points left in the window. */
  remainingPoints: number
  /** Milliseconds until the window ends. */
  msBeforeNext: number
  /** Points spent in the window. */
  consumedPoints: number
}

/** One rule: `points` per `duration` seconds, per key. */
export interface RateLimiter {
  /** Spend `points` (default 1). Rejects with a RateLimitState when there were not enough, with an Error when the store failed. */
  consume(key: string, points?: number): Promise<RateLimitState>
  /** The key's counter, or null when it spent nothing in the current window. */
  get(key: string): Promise<RateLimitState | null>
}

/** A rule as the gateway asks the store for it. */
export interface RateLimitRule {
  /** Namespace of the rule's keys (`zapgate-account`, ...). */
  keyPrefix: string
  points: number
  /** Window length in seconds. */
  duration: number
}

/** Makes one limiter per rule. */
export interface RateLimitStore {
  limiter(rule: RateLimitRule): RateLimiter
  /** Release connections (called by the gateway only for a store it created). */
  close?(): Promise<void>
}
