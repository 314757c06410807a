import type { Context, Middleware, Next } from 'koa'
import type { OperationServices } from '../operations/operation.ts'
import { requestState } from './request-state.ts'

/**
 * Middleware: for an operation that declares a device (see DeviceNeed), the caller's account by its
 * `authkey` (else `unauthenticated`) and the device inside that account (else `device-not-found`; a
 * link's device is looked up when routed), from the cache when it can tell, else the store.
 */
export function authenticate({ accounts, devices }: OperationServices): Middleware {
  return async function gatewayAuth(ctx: Context, next: Next) {
    const state = requestState(ctx)
    const need = state.operation!.device
    if (!need) return next()
    const input = state.input as Record<string, unknown>
    state.session = typeof need.session === 'function' ? need.session(input) : need.session
    const account = (state.account = accounts.cachedAccount(input.authkey) ?? (await accounts.require(input.authkey)))
    if (state.session !== 'link') {
      const ref = input[need.ref] as string
      state.device = devices.cachedDevice(account, ref, need.match ?? ['id', 'name', 'appkey']) ?? (await devices.require(account, ref, need.match))
    }
    return next()
  }
}
