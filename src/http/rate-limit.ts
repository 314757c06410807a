import type { Context, Next } from 'koa'
import { isGatewayError } from '../errors.ts'
import type { RateLimits } from '../security/rate-limits.ts'
import { requestState } from './request-state.ts'

/**
 * The request limits that apply around an operation (see RateLimits). A request carrying an authkey
 * counts against that account key's limit, and is refused (429) while that key has used up its
 * failed attempts from the client's IP; a key that turns out unknown or expired counts as a failed
 * attempt of that key and IP, and of the IP, and is answered 429 instead of 401 once the IP is past
 * its ceiling. Registrations and OTP verifications are limited in their handlers. A request forwarded
 * by another instance is not counted again. Undefined (no middleware at all) when none of those limits is on.
 */
export function rateLimitRequests(rateLimits: RateLimits) {
  if (!rateLimits.limitsRequests) return undefined
  return async function gatewayRateLimit(ctx: Context, next: Next) {
    const state = requestState(ctx)
    // A forwarded request was counted by the instance the client called.
    if (state.forwardedFrom) return next()
    const authkey = state.body!.fields.authkey
    if (authkey === undefined || authkey === null || authkey === '') return next()
    const key = typeof authkey === 'string' ? authkey : JSON.stringify(authkey)
    await rateLimits.beforeAuth(key, ctx.ip)
    try {
      await next()
    } catch (err) {
      if (isGatewayError(err, 'unauthenticated')) await rateLimits.authFailed(key, ctx.ip)
      throw err
    }
  }
}
