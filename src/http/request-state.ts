import type { Context } from 'koa'
import type { Account } from '../domain/accounts.ts'
import type { Device } from '../domain/devices.ts'
import type { MediaHold } from '../domain/messaging/media-budget.ts'
import type { Operation, SessionNeed, UploadedFile } from '../operations/operation.ts'
import type { SessionStatus } from '../ports/transport.ts'

/** Parsed request: the body fields, the files of a multipart body, and a plain JSON body's bytes (forwarded as they came). */
export interface ParsedBody {
  fields: Record<string, unknown>
  uploads: ReadonlyMap<string, UploadedFile>
  raw?: Buffer
}

/** Who forwarded a verified request, and for which client (the holder uses these, not the forwarder's). */
export interface ForwardedFrom {
  instanceId: string
  clientIp?: string
  baseUrl?: string
}

/** What the gateway's middleware learn about a request, each field set by one of them (kept on ctx.state under a Symbol of its own, requestState; the handler's view: OperationContext). */
export class RequestState {
  /** Set when the request was forwarded by another instance and verified (it is then never forwarded again). */
  forwardedFrom: ForwardedFrom | undefined = undefined
  /** This request's share of the media budget (a large body's, or taken by a media fetch); given back once answered. */
  mediaHold: MediaHold | undefined = undefined
  body: ParsedBody | undefined = undefined
  operation: Operation | undefined = undefined
  /** The body validated (and coerced) by the operation's schema. */
  input: unknown = undefined
  session: SessionNeed | undefined = undefined
  account: Account | undefined = undefined
  device: Device | undefined = undefined
  status: SessionStatus | undefined = undefined
  ensured: { created: boolean; appkey?: string } | undefined = undefined
  /** How the error boundary (answerErrors) words an error the operation threw: set by the step that knows (a device let go meanwhile is moving, not disconnected). */
  errorMapper: ((err: unknown) => unknown) | undefined = undefined
  /** The remembered holder that refused this request before anything ran (routeToHolder's early step), and its answer should the store name it again. */
  refusedBy: { id: string; answer(): unknown } | undefined = undefined
}

// A Symbol, not a name: a host's own `ctx.state.gateway` (a payment gateway's, a tenant's) is neither used nor written, and JSON or a template given ctx.state never shows it.
const STATE = Symbol('zapgate request state')

/** The request's gateway state, made on first use. */
export function requestState(ctx: Context): RequestState {
  return ((ctx.state as { [STATE]?: RequestState })[STATE] ??= new RequestState())
}

/** The route a request matched (`/qr/:token`: never a link's token, which is a capability), else its path: what logs and events name. */
export const routeOf = (ctx: Context): string => String((ctx as { _matchedRoute?: unknown })._matchedRoute ?? ctx.path)
