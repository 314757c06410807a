/** The longest wait a receiver's `Retry-After` can impose (24 h); longer values are cut to this. */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000

/** The shortest wait a `Retry-After` yields (a `0` must not become a tight loop). */
export const MIN_RETRY_AFTER_MS = 1_000

/** Jitter applied to each retry delay: ±20 %, so that retries of many events spread out. */
const JITTER = 0.2

/**
 * The delay before the next attempt after `failures` failed ones (1 = the first attempt failed).
 * Past the end of the list the last delay repeats, until the event's maximum age.
 */
export function retryDelay(delays: readonly number[], failures: number, random: () => number = Math.random): number {
  const base = delays[Math.min(Math.max(failures, 1), delays.length) - 1]
  return Math.max(0, Math.round(base * (1 - JITTER + 2 * JITTER * random())))
}

/**
 * The wait a `Retry-After` header asks for, in ms: delta-seconds or an HTTP date; at least 1 s and
 * at most 24 h. Undefined when the header is absent or unreadable (the retry delays then apply).
 */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  const text = value?.trim()
  if (!text) return undefined
  let ms: number
  if (/^\d+$/.test(text)) ms = Number(text) * 1000
  else {
    const at = Date.parse(text)
    if (Number.isNaN(at) || !/[a-z]/i.test(text)) return undefined
    ms = at - now
  }
  return Math.min(Math.max(ms, MIN_RETRY_AFTER_MS), MAX_RETRY_AFTER_MS)
}
