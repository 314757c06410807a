import type { Context, Middleware, Next } from 'koa'
import type { OperationServices } from '../operations/operation.ts'
import { requestState } from './request-state.ts'

/**
 * Middleware: for an operation that declares a device (see DeviceNeed), the caller's account (its
 * `authkey`: unknown or expired is `unauthenticated`) and the device inside that account (none is
 * `device-not-found`; a link's device may not exist yet and is looked up when routed). Every lookup
 * is scoped to the caller's account, before anything else about the device (its holder) is asked.
 * The lookups read the record cache first; the store decides what it does not hold.
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
