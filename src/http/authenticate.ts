import type { Context, Middleware, Next } from 'koa'
import type { OperationServices } from '../operations/operation.ts'
import { requestState } from './request-state.ts'

/**
 * Middleware: for an operation that declares a device, the caller's account (by `authkey`, else
 * `unauthenticated`) and the device in that account (else `device-not-found`; a link's is looked up
 * when routed), before anything else about the device (its holder) is asked.
 */
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
