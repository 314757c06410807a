import type { Context, Middleware } from 'koa'
import type { Account } from '../domain/accounts.ts'
import type { Device } from '../domain/devices.ts'
import type { MediaHold } from '../domain/messaging/media-budget.ts'
import type { Operation, OperationContext, OperationServices, UploadedFile } from '../operations/operation.ts'
import type { SessionStatus } from '../ports/transport.ts'
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
  return function gatewayOperation(ctx: Context) {
    const state = requestState(ctx)
    const answer = (reply: Awaited<ReturnType<Operation['handle']>>) => sendAnswer(ctx, deps.httpStatus, { status: 200, ...reply })
    return Promise.resolve(state.operation!.handle(state.input, new RequestContext(ctx, state, deps))).then(answer)
  }
}

// --- Internal helpers ---

/** What a handler gets besides its input; the base URL, client IP and media hold are read only if it asks. A class: an object literal with getters per request cost a third more CPU per send (bench/README.md). */
class RequestContext implements OperationContext {
  constructor(
    private readonly ctx: Context,
    private readonly state: RequestState,
    private readonly deps: RunDeps,
  ) {}

  get services(): OperationServices {
    return this.deps.services
  }

  get uploads(): ReadonlyMap<string, UploadedFile> {
    return this.state.body!.uploads
  }

  get status(): SessionStatus | undefined {
    return this.state.status
  }

  get ensured(): { created: boolean; appkey?: string } | undefined {
    return this.state.ensured
  }

  get baseUrl(): string {
    return this.deps.baseUrlOf(this.ctx, this.state)
  }

  get clientIp(): string {
    return this.state.forwardedFrom?.clientIp ?? this.ctx.ip
  }

  get mediaHold(): MediaHold {
    return (this.state.mediaHold ??= this.deps.services.mediaBudget.hold())
  }

  get account(): Account {
    return this.state.account ?? declared('account', this.state)
  }

  get device(): Device {
    return this.state.device ?? declared('device', this.state)
  }
}

/** An operation read the account or device without declaring `device`: a mistake in the operation table. */
function declared(what: string, state: RequestState): never {
  throw new Error(`operation ${state.operation?.name} reads its ${what} but declares no device`)
}
