import type { Context, Next } from 'koa'
import { isGatewayError } from '../errors.ts'
import type { RateLimits } from '../security/rate-limits.ts'
import { requestState } from './request-state.ts'

/** Middleware (undefined when no limit is on): a request counts against its authkey's limits, an unknown key as a failed attempt (a forwarded one only then: its forwarder counted it). */
export function rateLimitRequests(rateLimits: RateLimits) {
  if (!rateLimits.limitsRequests) return undefined
  return async function gatewayRateLimit(ctx: Context, next: Next) {
    const state = requestState(ctx)
    const authkey = state.body!.fields.authkey
    if (authkey === undefined || authkey === null || authkey === '') return next()
    const key = typeof authkey === 'object' ? '{}' : String(authkey) // a list or object is never a key (its JSON text may not even be made)
    const ip = state.forwardedFrom?.clientIp ?? ctx.ip
    if (!state.forwardedFrom) await rateLimits.beforeAuth(key, ip)
    try {
      await next()
    } catch (err) {
      if (isGatewayError(err, 'unauthenticated')) await rateLimits.authFailed(key, ip)
      throw err
    }
  }
}
