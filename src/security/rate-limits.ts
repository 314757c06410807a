import { RateLimiterMemory } from 'rate-limiter-flexible'
import { GatewayError } from '../errors.ts'
import type { Logger } from '../logger.ts'
import type { RateLimiter, RateLimitState, RateLimitStore } from '../ports/rate-limit.ts'
import { hashKey } from './keys.ts'
import { Deadlines } from '../store/deadlines.ts'

/** A limit: `points` per `duration` seconds. */
export interface RateRule {
  points: number
  duration: number
}

/** The limits of `rateLimit` (each a rule, or false to switch it off). */
export interface RateLimitRules {
  /** Requests per account key (by the SHA-256 of the presented authkey). Default 3000 per 60 s (50 a second on average, in bursts). */
  perAccount?: RateRule | false
  /** Failed authkey attempts per client IP; past it, requests carrying an authkey from that IP are refused until the window ends. Default 30 per 900 s. */
  authFailures?: RateRule | false
  /** Registrations (operation 1) per client IP. Default 20 per 3600 s. */
  registrations?: RateRule | false
  /** OTP verifications per device and recipient (on top of otpMaxTries per code). Default 10 per 900 s. */
  otpVerifications?: RateRule | false
}

/** createGateway options of rate limiting (part of GatewayOptions). */
export interface RateLimitOptions {
  /** Request limits, answered 429 with Retry-After; `false` switches every one off (benchmarks, trusted callers). */
  rateLimit?: RateLimitRules | false
  /** Where the counters live. Default: this process's memory; `redisRateLimitStore()` shares them across processes. */
  rateLimitStore?: RateLimitStore
}

/** The default limits. */
const defaultRateLimits: Required<RateLimitRules> = {
  perAccount: { points: 3000, duration: 60 },
  authFailures: { points: 30, duration: 900 },
  registrations: { points: 20, duration: 3600 },
  otpVerifications: { points: 10, duration: 900 },
}

/** The rules after defaults (false: off). */
export type RateLimitSettings = { [K in keyof RateLimitRules]-?: RateRule | false }

/** Fill in the default rules; throws a clear Error for an impossible one. */
export function resolveRateLimitOptions(options: RateLimitOptions): RateLimitSettings {
  if (options.rateLimit === false) return { perAccount: false, authFailures: false, registrations: false, otpVerifications: false }
  const given = options.rateLimit ?? {}
  const settings = { ...defaultRateLimits } as RateLimitSettings
  for (const name of Object.keys(defaultRateLimits) as (keyof RateLimitRules)[]) {
    const rule = given[name]
    if (rule === undefined) continue
    if (rule !== false && !(Number.isInteger(rule?.points) && rule.points > 0 && Number.isInteger(rule.duration) && rule.duration > 0)) {
      throw new Error(`createGateway: rateLimit.${name} must be false or { points, duration } with positive whole numbers (duration in seconds)`)
    }
    settings[name] = rule
  }
  return settings
}

/** A RateLimitStore keeping counters in this process's memory (the default). */
export function memoryRateLimitStore(): RateLimitStore {
  return { limiter: rule => new RateLimiterMemory(rule) }
}

/**
 * The gateway's limits. Each check throws 429 `Muitas requisições...` with Retry-After when over;
 * a store that fails or does not answer within a second lets the request through (logged), so a
 * limiter outage never takes the API down with it.
 */
export class RateLimits {
  private readonly limiters: Partial<Record<keyof RateLimitRules, RateLimiter>> = {}
  private readonly deadlines = new Deadlines(1000)

  constructor(
    private readonly settings: RateLimitSettings,
    store: RateLimitStore,
    private readonly logger: Logger,
  ) {
    for (const name of Object.keys(settings) as (keyof RateLimitRules)[]) {
      const rule = settings[name]
      if (rule) this.limiters[name] = store.limiter({ keyPrefix: `zapgate-${name}`, ...rule })
    }
  }

  /** Whether requests carrying an authkey are limited at all (per account, or failed attempts per IP). */
  get limitsRequests(): boolean {
    return this.limiters.perAccount !== undefined || this.limiters.authFailures !== undefined
  }

  /** Count a request of the account key `authkey` (its hash is the key; the key itself is never stored). */
  async account(authkey: string): Promise<void> {
    if (this.limiters.perAccount) await this.consume('perAccount', hashKey(authkey))
  }

  /** 429 while `ip` has used up its failed authkey attempts. */
  async authBlocked(ip: string): Promise<void> {
    const limiter = this.limiters.authFailures
    const rule = this.settings.authFailures
    if (!limiter || !rule) return
    const state = await this.guard(() => limiter.get(ip))
    if (state && state.consumedPoints >= rule.points) throw tooMany(state)
  }

  /** Record a failed authkey attempt from `ip` (never throws). */
  async authFailed(ip: string): Promise<void> {
    await this.consume('authFailures', ip).catch(() => undefined)
  }

  /** Count a registration from `ip`. */
  registration(ip: string): Promise<void> {
    return this.consume('registrations', ip)
  }

  /** Count an OTP verification of `recipient` on a device. */
  otpVerification(deviceId: string, recipient: string): Promise<void> {
    return this.consume('otpVerifications', `${deviceId}:${recipient}`)
  }

  // --- Internal helpers ---

  private async consume(name: keyof RateLimitRules, key: string): Promise<void> {
    const limiter = this.limiters[name]
    if (!limiter) return
    try {
      await this.guard(() => limiter.consume(key))
    } catch (rejection) {
      if (rejection instanceof GatewayError) throw rejection
      throw tooMany(rejection as RateLimitState)
    }
  }

  /** Run a store call; a store failure or a call longer than a second resolves undefined (fail open). */
  private async guard<T>(call: () => Promise<T>): Promise<T | undefined> {
    try {
      return await this.deadlines.run(call(), () => new LateStoreError())
    } catch (err) {
      if (err instanceof LateStoreError) {
        this.logger.warn({}, 'rate-limit store did not answer in time; request let through')
        return undefined
      }
      if (err instanceof Error) {
        this.logger.warn({ err }, 'rate-limit store failed; request let through')
        return undefined
      }
      throw err
    }
  }

}

// --- Internal helpers ---

function tooMany(state: RateLimitState): GatewayError {
  const seconds = Math.max(1, Math.ceil((state?.msBeforeNext ?? 1000) / 1000))
  return new GatewayError('rate-limited', { retryAfterSeconds: seconds })
}

/** The rate-limit store took longer than a second. */
class LateStoreError extends Error {}
