import type { Context, Middleware, Next } from 'koa'
import type { Account } from '../domain/accounts.ts'
import type { Device } from '../domain/devices.ts'
import { GatewayError } from '../errors.ts'
import type { OperationServices } from '../operations/operation.ts'
import { requestState, type RequestState } from './request-state.ts'

/** Middleware: the caller's account (`unauthenticated`) and its declared device (`device-not-found`; a link's when routed), before its holder is asked. */
export function authenticate({ accounts, devices }: OperationServices): Middleware {
  /** The declared device of `account` (the caller's own), from the record caches when they hold it. */
  const withDevice = (next: Next, state: RequestState, account: Account, input: Record<string, unknown>) => {
    state.account = account
    if (state.session === 'link') return next()
    const need = state.operation!.device!
    const ref = input[need.ref] as string
    const device = devices.cached(account, ref, need.match ?? [])
    if (device) return found(next, state, device, need.deletes)
    return devices.require(account, ref, need.match).then(device => found(next, state, device, need.deletes))
  }
  return function gatewayAuth(ctx: Context, next: Next) {
    const state = requestState(ctx)
    const need = state.operation!.device
    if (!need) return next()
    const input = state.input as Record<string, unknown>
    state.session = typeof need.session === 'function' ? need.session(input) : need.session
    // From the record caches without a promise when they hold the records (most sends: ~10% of a send's CPU, bench/README.md).
    const account = accounts.cached(input.authkey)
    if (account) return withDevice(next, state, account, input)
    return accounts.require(input.authkey).then(found => withDevice(next, state, found, input))
  }
}

// --- Internal helpers ---

/** On with the device, unless its deletion was cut short (marked `removing`): then it is not found, but by the operation that deletes it. */
function found(next: Next, state: RequestState, device: Device, deletes: true | undefined) {
  if (device.removing && !deletes) throw new GatewayError('device-not-found')
  state.device = device
  return next()
}
