/** Calendar helpers that honour the gateway's time zone. */

/** Today's date (YYYY-MM-DD) in `timeZone`, `days` days from `now`. */
export function dateInZone(timeZone: string, days = 0, now = Date.now()): string {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(
    new Date(now + days * 86_400_000),
  )
  const get = (type: string) => parts.find(p => p.type === type)?.value
  return `${get('year')}-${get('month')}-${get('day')}`
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
