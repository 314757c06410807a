import type { Context, Middleware, Next } from 'koa'
import type { DeviceMatch } from '../domain/devices.ts'
import type { DeviceNeed, OperationServices } from '../operations/operation.ts'
import { requestState, type RequestState } from './request-state.ts'

/** A device reference without a declared match: its id, name or appkey. */
const ANY_MATCH: DeviceMatch[] = ['id', 'name', 'appkey']

/**
 * Middleware: for an operation that declares a device (see DeviceNeed), the caller's account (its
 * `authkey`: unknown or expired is `unauthenticated`) and the device inside that account (none is
 * `device-not-found`; a link's device may not exist yet and is looked up when routed). Every lookup
 * is scoped to the caller's account, before anything else about the device (its holder) is asked.
 * Served from the cache when the cache can tell; the store decides the rest.
 */
export function authenticate({ accounts, devices }: OperationServices): Middleware {
  const lookUp = async (next: Next, state: RequestState, need: DeviceNeed<any>, input: Record<string, unknown>) => {
    const account = (state.account ??= await accounts.require(input.authkey))
    if (state.session !== 'link') state.device = await devices.require(account, input[need.ref] as string, need.match)
    return next()
  }
  return function gatewayAuth(ctx: Context, next: Next) {
    const state = requestState(ctx)
    const need = state.operation!.device
    if (!need) return next()
    const input = state.input as Record<string, unknown>
    const session = typeof need.session === 'function' ? need.session(input) : need.session
    state.session = session
    const account = (state.account = accounts.cachedAccount(input.authkey))
    if (account && session !== 'link') {
      const device = devices.cachedDevice(account, input[need.ref] as string, need.match ?? ANY_MATCH)
      if (device) {
        state.device = device
        return next()
      }
    }
    return lookUp(next, state, need, input)
  }
}
