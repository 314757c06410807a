/** Calendar helpers that honour the gateway's time zone, and how far apart hosts' clocks may be. */

/** How long the hosts' clocks may disagree: widens a client's schedule time. */
export const CLOCK_SKEW_ALLOWANCE_MS = 30_000

/** The last date worked out per zone, with its minute: every zone changes date on a minute boundary (formatting one costs ~4 µs, a send asks once). */
const lastDates = new Map<string, { minute: number; date: string }>()

/** Today's date (YYYY-MM-DD) in `timeZone`, `days` days from `now`. */
export function dateInZone(timeZone: string, days = 0, now = Date.now()): string {
  const minute = Math.floor((now + days * 86_400_000) / 60_000)
  const last = lastDates.get(timeZone)
  if (last?.minute === minute) return last.date
  const parts = dayFormat(timeZone).formatToParts(new Date(minute * 60_000))
  const get = (type: string) => parts.find(p => p.type === type)?.value
  const date = `${get('year')}-${get('month')}-${get('day')}`
  if (lastDates.size < 64 || lastDates.has(timeZone)) lastDates.set(timeZone, { minute, date })
  return date
}

/** The calendar date `days` days after `date` (both YYYY-MM-DD). */
export function addDays(date: string, days: number): string {
  const [year, month, day] = date.split('-').map(Number)
  return new Date(Date.UTC(year!, month! - 1, day! + days)).toISOString().slice(0, 10)
}

/** Whether `timeZone` is a zone name Intl knows. */
export function isValidTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone })
    return true
  } catch {
    return false
  }
}

/** One formatter per zone, built on first use. */
const dayFormats = new Map<string, Intl.DateTimeFormat>()

function dayFormat(timeZone: string): Intl.DateTimeFormat {
  let format = dayFormats.get(timeZone)
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' })
    if (dayFormats.size < 64) dayFormats.set(timeZone, format)
  }
  return format
}
