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
    const account = (state.account = await accounts.require(input.authkey))
    if (state.session !== 'link') state.device = await devices.require(account, input[need.ref] as string, need.match)
    return next()
  }
}
