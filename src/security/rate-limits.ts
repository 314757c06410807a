import { GatewayError } from '../errors.ts'
import type { Logger } from '../logger.ts'
import type { Storage } from '../ports/storage.ts'
import { WindowCounters, type RateRule, type WindowCount } from './rate-counters.ts'
import { clientNetwork } from './url-policy.ts'

/** The request limits after defaults (each a rule, or false: off); see the `rateLimit` option (src/options.ts). */
export interface RateLimitSettings {
  perAccount: RateRule | false
  authFailures: RateRule | false
  authFailuresPerIp: RateRule | false
  registrations: RateRule | false
  otpVerifications: RateRule | false
}

/**
 * The gateway's limits, over fixed-window counters (see WindowCounters: in the store when every
 * instance reaches it, else in this process). Each check throws 429 `Muitas requisições...` with
 * Retry-After (the seconds left in the window) when over; a store that fails or does not answer
 * within a second lets the request through (logged).
 *
 * Failed authkeys are counted per presented key and client IP, so that one client's wrong keys
 * never lock out the other tenants behind the same address (a NAT, the host app's own server); a
 * much higher ceiling per IP answers key spraying with 429, yet a valid key is never refused
 * because of someone else's failures.
 */
export class RateLimits {
  private readonly counters: WindowCounters

  constructor(
    private readonly settings: RateLimitSettings,
    storage: Storage,
    private readonly logger: Logger,
  ) {
    this.counters = new WindowCounters(storage, logger)
  }

  /** Whether requests carrying an authkey are limited at all (per account, or failed attempts). */
  get limitsRequests(): boolean {
    const { perAccount, authFailures, authFailuresPerIp } = this.settings
    return perAccount !== false || authFailures !== false || authFailuresPerIp !== false
  }

  /**
   * Before a request carrying `authkey` from `ip` runs: count it against the account key's limit,
   * and refuse it while that key has used up its failed attempts from that IP.
   */
  async beforeAuth(authkey: string, ip: string): Promise<void> {
    const { perAccount, authFailures } = this.settings
    const [used, failed] = await Promise.all([
      perAccount ? this.counters.hit('perAccount', perAccount, [authkey]) : undefined,
      authFailures ? this.counters.peek('authFailures', authFailures, [authkey, clientNetwork(ip)]) : undefined,
    ])
    if (authFailures && failed && failed.count >= authFailures.points) throw tooMany(failed)
    if (perAccount && used && used.count > perAccount.points) throw tooMany(used)
  }

  /**
   * Record that `authkey` from `ip` was refused as unknown (the key of a suspended or expired account
   * is not counted: resumed or renewed, it must work at once, and its requests count per account). Throws 429 (for the caller to
   * answer instead of 401) when this attempt is past the IP's ceiling or the key's own limit.
   */
  async authFailed(authkey: string, ip: string): Promise<void> {
    const { authFailures, authFailuresPerIp } = this.settings
    ip = clientNetwork(ip) // an IPv6 client picks any address of its /64
    const [ofKey, ofIp] = await Promise.all([
      authFailures ? this.counters.hit('authFailures', authFailures, [authkey, ip]) : undefined,
      authFailuresPerIp ? this.counters.hit('authFailuresPerIp', authFailuresPerIp, [ip]) : undefined,
    ])
    if (authFailuresPerIp && ofIp && ofIp.count > authFailuresPerIp.points) {
      if (ofIp.count === authFailuresPerIp.points + 1)
        this.logger.warn(
          { ip, failures: ofIp.count, seconds: ofIp.retryAfterSeconds },
          'failed authkeys from one IP past authFailuresPerIp: unknown keys from it are answered 429',
        )
      throw tooMany(ofIp)
    }
    if (authFailures && ofKey && ofKey.count > authFailures.points) throw tooMany(ofKey)
  }

  /** Count a registration from `ip`. */
  registration(ip: string): Promise<void> {
    return this.limit('registrations', [clientNetwork(ip)])
  }

  /** Count an OTP verification of `recipient` on a device. */
  otpVerification(deviceId: string, recipient: string): Promise<void> {
    return this.limit('otpVerifications', [deviceId, recipient])
  }

  // --- Internal helpers ---

  /** Count one for `what` under the rule `name` and throw 429 past its points. */
  private async limit(name: 'registrations' | 'otpVerifications', what: string[]): Promise<void> {
    const rule = this.settings[name]
    if (!rule) return
    const count = await this.counters.hit(name, rule, what)
    if (count && count.count > rule.points) throw tooMany(count)
  }
}

// --- Internal helpers ---

function tooMany(count: WindowCount): GatewayError {
  return new GatewayError('rate-limited', { retryAfterSeconds: count.retryAfterSeconds })
}
