import type { Context, Middleware } from 'koa'
import type { OperationContext, OperationServices } from '../operations/operation.ts'
import { sendAnswer, type HttpStatusMode } from './render.ts'
import { requestState, type RequestState } from './request-state.ts'

/** What runOperation needs. */
interface RunDeps {
  services: OperationServices
  httpStatus: HttpStatusMode
  baseUrlOf(ctx: Context, state: RequestState): string
}

/** Middleware, last of an operation path: run the selected operation's handler and answer 200 with its reply. */
export function runOperation(deps: RunDeps): Middleware {
  return async function gatewayOperation(ctx: Context) {
    const state = requestState(ctx)
    const reply = await state.operation!.handle(state.input, operationContext(ctx, state, deps))
    sendAnswer(ctx, deps.httpStatus, { status: 200, ...reply })
  }
}

// --- Internal helpers ---

/** What a handler gets besides its input; the base URL, client IP and media hold are read only if it asks. */
function operationContext(ctx: Context, state: RequestState, deps: RunDeps): OperationContext {
  return {
    services: deps.services,
    uploads: state.body!.uploads,
    status: state.status,
    ensured: state.ensured,
    get baseUrl() {
      return deps.baseUrlOf(ctx, state)
    },
    get clientIp() {
      return state.forwardedFrom?.clientIp ?? ctx.ip
    },
    get mediaHold() {
      return (state.mediaHold ??= deps.services.mediaBudget.hold())
    },
    get account() {
      return state.account ?? declared('account', state)
    },
    get device() {
      return state.device ?? declared('device', state)
    },
  }
}

/** An operation read the account or device without declaring `device`: a mistake in the operation table. */
function declared(what: string, state: RequestState): never {
  throw new Error(`operation ${state.operation?.name} reads its ${what} but declares no device`)
}
