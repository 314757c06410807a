import { createRequire } from 'node:module'

/** autocannon (CommonJS, no bundled types): the members used here. */
const autocannon = createRequire(import.meta.url)('autocannon') as (options: Record<string, unknown>) => Promise<CannonResult>
interface CannonResult {
  requests: { average: number; total: number }
  latency: { p50: number; p99: number; average: number }
  duration: number
  errors: number
  timeouts: number
  non2xx: number
}

/** A load run's figures. */
export interface LoadResult {
  /** Answers per second over the measured window (2xx only count as done work). */
  rps: number
  p50: number
  p99: number
  total: number
  errors: number
  non2xx: number
}

/** What to send. */
export interface LoadOptions {
  /** Several URLs: the connections are shared out over them round robin (autocannon's own). */
  url: string | string[]
  path: string
  body: unknown
  /** Bodies sent in turn on every connection instead of `body` alone (e.g. one per device). */
  bodies?: unknown[]
  connections?: number
  seconds?: number
  warmupSeconds?: number
  /** Requests per second over all connections (open loop at this rate); default: as fast as answered. */
  rate?: number
}

/**
 * POST the same JSON body over keep-alive connections with autocannon: an unmeasured warm-up, then
 * the measured run. Throws when any answer is not 2xx or any request fails, so a figure is never
 * the speed of an error.
 */
export async function load(options: LoadOptions): Promise<LoadResult> {
  const connections = options.connections ?? 10
  const run = (duration: number) =>
    autocannon({
      url: Array.isArray(options.url) ? options.url.map(url => url + options.path) : options.url + options.path,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(options.body),
      ...(options.bodies
        ? {
            requests: options.bodies.map(body => ({
              method: 'POST',
              path: options.path,
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(body),
            })),
          }
        : {}),
      connections,
      duration,
      ...(options.rate ? { overallRate: options.rate } : {}),
    })
  if ((options.warmupSeconds ?? 3) > 0) await run(options.warmupSeconds ?? 3)
  const result = await run(options.seconds ?? 10)
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0) {
    throw new Error(
      `load on ${options.path}: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx answers of ${result.requests.total}`,
    )
  }
  return {
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    errors: result.errors,
    non2xx: result.non2xx,
  }
}
