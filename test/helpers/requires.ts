import type { Callback, Test } from 'uvu'

/** Something outside Node that some tests need (a server, a program), and how a run provides it. */
export interface Service {
  /** What it is, as the skip line names it: "Redis", "Chromium". */
  name: string
  /** The URL or path the tests use; undefined when the service is missing. */
  value: string | undefined
  /** How a run provides it: "set REDIS_URL". */
  how: string
}

/** The Redis that the tests share (REDIS_URL; `.ci/run` sets it). */
export const REDIS: Service = fromEnv('Redis', 'REDIS_URL')

/** The PostgreSQL that the tests share (POSTGRES_URL; `.ci/run` sets it). */
export const POSTGRES: Service = fromEnv('PostgreSQL', 'POSTGRES_URL')

/** Whether this run is CI (`CI=true`), where every service is provided and a missing one is a failure. */
export const inCI = process.env.CI === 'true'

/**
 * Register tests that need `service` with `test`: `test` itself when the service is here (or
 * `service` is undefined: nothing is needed). When it is
 * missing, one printed line says what is skipped and what it needs, and each test registered counts
 * as skipped in uvu's totals (so in the runner's closing line); with `CI=true`, where `.ci/run`
 * provides every service, each one is a failing test naming the missing service instead.
 */
export function needing<T>(test: Test<T>, service: Service | undefined, what: string): (name: string, fn: Callback<T>) => void {
  if (service === undefined || service.value !== undefined) return (name, fn) => test(name, fn)
  const needs = `needs ${service.name}: ${service.how}`
  if (inCI) {
    return name =>
      test(name, () => {
        throw new Error(`CI=true, and ${what} cannot run (${needs}): in CI nothing may be skipped`)
      })
  }
  console.log(`skipped: ${what} (${needs})`)
  return (name, fn) => test.skip(name, fn)
}

// --- Internal helpers ---

function fromEnv(name: string, variable: string): Service {
  return { name, value: process.env[variable] || undefined, how: `set ${variable}` }
}
