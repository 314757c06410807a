/** The shortest wait a `Retry-After` yields (a `0` must not become a tight loop) and the longest it can impose (longer values are cut to it). */
export const [MIN_RETRY_AFTER_MS, MAX_RETRY_AFTER_MS] = [1_000, 24 * 3_600_000]

/** The delay before the next attempt after `failures` failed ones (past the list's end its last delay repeats), ±20 % jitter. */
export function retryDelay(delays: readonly number[], failures: number, random: () => number = Math.random): number {
  const base = delays[Math.min(Math.max(failures, 1), delays.length) - 1]
  return Math.max(0, Math.round(base * (0.8 + 0.4 * random())))
}

/** The wait a `Retry-After` header asks for (delta-seconds or an HTTP date), between 1 s and 24 h; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  const text = value?.trim()
  if (!text) return undefined
  const at = /^\d+$/.test(text) ? now + Number(text) * 1000 : /[a-z]/i.test(text) ? Date.parse(text) : NaN
  if (Number.isNaN(at)) return undefined
  return Math.min(Math.max(at - now, MIN_RETRY_AFTER_MS), MAX_RETRY_AFTER_MS)
}
