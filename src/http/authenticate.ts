import type { Context, Middleware, Next } from 'koa'
import type { OperationServices } from '../operations/operation.ts'
import { requestState } from './request-state.ts'

/** Middleware: the caller's account (`unauthenticated`) and its declared device (`device-not-found`; a link's when routed), before its holder is asked. */
export function authenticate({ accounts, devices }: OperationServices): Middleware {
  return async function gatewayAuth(ctx: Context, next: Next) {
    const state = requestState(ctx)
    const need = state.operation!.device
    if (!need) return next()
    const input = state.input as Record<string, unknown>
    state.session = typeof need.session === 'function' ? need.session(input) : need.session
    // From the record caches without a promise when they hold the records (most sends: ~10% of a send's CPU, bench/README.md).
    const account = (state.account = accounts.cached(input.authkey) ?? (await accounts.require(input.authkey)))
    const ref = input[need.ref] as string
    if (state.session !== 'link') state.device = devices.cached(account, ref, need.match ?? []) ?? (await devices.require(account, ref, need.match))
    return next()
  }
}
