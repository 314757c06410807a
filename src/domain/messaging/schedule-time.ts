/** A schedule time: the instant, and its canonical wall-clock text. */
export interface ScheduleTime {
  at: number
  text: string
}

/**
 * Read `YYYY-MM-DD HH:MM:SS` (or with `T`, or without seconds) as a wall-clock time in `timeZone`: undefined when malformed, impossible
 * (2026-02-30, 24:00) or skipped by a daylight-saving change. A repeated time (clocks set back) is its first occurrence, or its second
 * when asked (`now`) during the second pass of the hour, the second not past by more than `skewMs` (asked during the first pass, a
 * time of the hour already gone is past: not moved an hour on).
 */
export function parseScheduleTime(input: string, timeZone: string, now?: number, skewMs = 0): ScheduleTime | undefined {
  const match = /^\s*(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?\s*$/.exec(input)
  if (!match) return undefined
  const [year, month, day, hour, minute, second] = match.slice(1).map(v => Number(v ?? 0))
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined
  const naive = Date.UTC(year, month - 1, day, hour, minute, second)
  if (new Date(naive).getUTCDate() !== day) return undefined
  const text = formatWallClock(naive, 'UTC')
  // The zone's offset at the instant, tried for the offsets before and after a change.
  const candidates = [naive - offsetAt(naive - 86_400_000, timeZone), naive - offsetAt(naive + 86_400_000, timeZone)]
  const [first, again] = candidates.filter(at => formatWallClock(at, timeZone) === text).sort((a, b) => a - b)
  if (first === undefined) return undefined
  // The second pass: past the first occurrence, the clocks already set back (the zone's offset now is the later one).
  const secondPass = again !== undefined && now !== undefined && now >= first && again >= now - skewMs && offsetAt(now, timeZone) === naive - again
  return { at: secondPass ? again : first, text }
}

/** The wall-clock text (`YYYY-MM-DD HH:MM:SS`) of an instant in `timeZone`. */
export function formatWallClock(at: number, timeZone: string): string {
  const parts = formatter(timeZone).formatToParts(new Date(at))
  const get = (type: string) => parts.find(p => p.type === type)?.value ?? '00'
  const hour = get('hour') === '24' ? '00' : get('hour')
  return `${get('year')}-${get('month')}-${get('day')} ${hour}:${get('minute')}:${get('second')}`
}

// --- Internal helpers ---

const formatters = new Map<string, Intl.DateTimeFormat>()

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone)
  if (!f) {
    const d = '2-digit'
    f = new Intl.DateTimeFormat('en-CA', { timeZone, hourCycle: 'h23', year: 'numeric', month: d, day: d, hour: d, minute: d, second: d })
    if (formatters.size < 64) formatters.set(timeZone, f)
  }
  return f
}

/** Milliseconds the zone is ahead of UTC at instant `at`. */
function offsetAt(at: number, timeZone: string): number {
  const wall = formatWallClock(at, timeZone)
  const [date, time] = wall.split(' ')
  const [y, mo, d] = date.split('-').map(Number)
  const [h, mi, s] = time.split(':').map(Number)
  return Date.UTC(y, mo - 1, d, h, mi, s) - Math.floor(at / 1000) * 1000
}
