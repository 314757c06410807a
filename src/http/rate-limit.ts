import type { Context, Next } from 'koa'
import { refusedInactive } from '../domain/accounts.ts'
import { isGatewayError } from '../errors.ts'
import type { RateLimits } from '../security/rate-limits.ts'
import type { Operation } from '../operations/operation.ts'
import { requestState, type ParsedBody } from './request-state.ts'

/** Middleware (undefined when no limit is on): a request counts against its authkey's limits, an unknown key as a failed attempt (a forwarded one only then: its forwarder counted it; the key of a suspended or expired account is none, so that it works at once when resumed or renewed); refused, it is answered in the words of the operation `select` names (verificarOTP's `valid: false`). */
export function rateLimitRequests(rateLimits: RateLimits, select: (body: ParsedBody) => Operation | undefined) {
  if (!rateLimits.limitsRequests) return undefined
  return async function gatewayRateLimit(ctx: Context, next: Next) {
    const state = requestState(ctx)
    const authkey = state.body!.fields.authkey
    if (authkey === undefined || authkey === null || authkey === '') return next()
    const key = typeof authkey === 'object' ? '{}' : String(authkey) // a list or object is never a key (its JSON text may not even be made)
    const ip = state.forwardedFrom?.clientIp ?? ctx.ip
    if (!state.forwardedFrom) await rateLimits.beforeAuth(key, ip).catch(err => Promise.reject(((state.operation ??= select(state.body!)), err)))
    try {
      await next()
    } catch (err) {
      if (isGatewayError(err, 'unauthenticated') && !refusedInactive(err)) await rateLimits.authFailed(key, ip)
      throw err
    }
  }
}
