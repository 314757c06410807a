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
  const at = /^\d+$/.test(text) ? now + Number(text) * 1000 : httpDate(text)
  if (Number.isNaN(at)) return undefined
  return Math.min(Math.max(at - now, MIN_RETRY_AFTER_MS), MAX_RETRY_AFTER_MS)
}

const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)'
const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)'
const TIME = '\\d{2}:\\d{2}:\\d{2}'
/** The three HTTP-date forms (RFC 9110 5.6.7): IMF-fixdate, RFC 850, asctime (GMT, though it does not say so). */
const HTTP_DATES = [
  new RegExp(`^${DAY}, \\d{1,2} ${MONTH} \\d{4} ${TIME} GMT$`, 'i'),
  new RegExp(`^(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, \\d{1,2}-${MONTH}-\\d{2} ${TIME} GMT$`, 'i'),
]
const ASCTIME = new RegExp(`^${DAY} ${MONTH} [ \\d]?\\d ${TIME} \\d{4}$`, 'i')

/** The time an HTTP date names, NaN for any other text (Date.parse alone reads many a garbage text as some date: "retry in 60"). */
function httpDate(text: string): number {
  if (HTTP_DATES.some(form => form.test(text))) return Date.parse(text)
  return ASCTIME.test(text) ? Date.parse(`${text} GMT`) : NaN
}
