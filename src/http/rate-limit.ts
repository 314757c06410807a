import type { Context, Next } from 'koa'
import { isGatewayError } from '../errors.ts'
import type { RateLimits } from '../security/rate-limits.ts'
import type { ParsedBody } from './body.ts'

/**
 * The request limits that apply before an operation runs (see RateLimits): a request carrying an
 * authkey is refused (429) while its client IP has used up its failed authkey attempts, and counts
 * against the limit of that account key; an authkey that turns out unknown or expired counts as a
 * failed attempt of the IP. Registrations and OTP verifications are limited in their handlers.
 * Undefined (no middleware at all) when both of those limits are off.
 */
export function rateLimitRequests(rateLimits: RateLimits) {
  if (!rateLimits.limitsRequests) return undefined
  return async function gatewayRateLimit(ctx: Context, next: Next) {
    const authkey = (ctx.state.gatewayBody as ParsedBody).fields.authkey
    const carriesKey = authkey !== undefined && authkey !== null && authkey !== ''
    if (carriesKey) {
      await rateLimits.authBlocked(ctx.ip)
      if (typeof authkey === 'string') await rateLimits.account(authkey)
    }
    try {
      await next()
    } catch (err) {
      if (carriesKey && isGatewayError(err, 'unauthenticated')) await rateLimits.authFailed(ctx.ip)
      throw err
    }
  }
}
