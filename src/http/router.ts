import Router from '@koa/router'
import type { Context, Middleware } from 'koa'
import { StructError, validate, type Struct } from 'superstruct'
import { GatewayError } from '../errors.ts'
import type { GatewayEvents } from '../events.ts'
import type { Logger } from '../logger.ts'
import { distinguishingFields, operationsOf, type Operation, type OperationContext, type OperationServices, type PathEntry, type UploadedFile } from '../operations/operation.ts'
import type { MediaRouteDeps } from './media-route.ts'
import type { SharePageDeps } from './share-page.ts'
import { bodyReader, type ParsedBody } from './body.ts'
import { compileBodyCheck, UNSURE, type FastCheck } from '../schema/fast-check.ts'
import { answerError, errorBoundary, sendAnswer, type HttpStatusMode } from './render.ts'
import { observeRequests } from './observe.ts'
import type { RequestDrain } from './drain.ts'
import { rateLimitRequests } from './rate-limit.ts'
import { sharePageRoutes } from './share-page.ts'
import { mediaRoutes } from './media-route.ts'
import { forwardedFrom, forwardedReader, forwardToHolder, type ClusterRouting } from './forwarding/to-holder.ts'
import { HeldElsewhere } from '../domain/cluster/device-leases.ts'
import type { MediaBudget, MediaHold } from '../domain/messaging/media-budget.ts'

/** What the gateway's router is built from. */
interface RouterDeps extends SharePageDeps, MediaRouteDeps {
  /** What the operations call. */
  services: OperationServices
  events: GatewayEvents
  logger: Logger
  httpStatus: HttpStatusMode
  bodyLimitBytes: number
  /** How long a request body may take to arrive (408 past it). */
  bodyTimeoutMs: number
  /** The configured public URL (else each request's origin and mount path). */
  baseUrl?: string
  /** Cluster mode: how a request for a device held by another instance reaches it. */
  cluster?: ClusterRouting
  /** Counts the requests in flight, and refuses new ones once the gateway is closing. */
  drain: RequestDrain
}

/** Build the gateway's router: every path of the table, plus the QR share pages and media links. */
export function buildRouter(table: readonly PathEntry[], deps: RouterDeps): Router {
  const router = new Router()
  router.use(observeRequests(deps.events))
  router.use(deps.drain.middleware())
  const readBody = bodyReader(deps.bodyLimitBytes, deps.bodyTimeoutMs)
  for (const entry of table) router.post(entry.path, operationRoute(entry, deps, readBody))
  const boundary = errorBoundary(deps.httpStatus, deps.logger)
  sharePageRoutes(router, deps, boundary)
  mediaRoutes(router, deps, boundary)
  return router
}

/** The operation a body selects on a path (the first whose distinguishing field is present), or the path's fallback. */
export function operationSelector(entry: PathEntry): (body: ParsedBody) => Operation | undefined {
  const choices = entry.operations.map(operation => ({ operation, fields: distinguishingFields(operation) }))
  return body => {
    for (const { operation, fields } of choices) {
      for (const field of fields) if (isPresent(body.fields[field]) || body.uploads.has(field)) return operation
    }
    return entry.fallback
  }
}

// --- Internal helpers ---

/**
 * Everything a request on an operation path goes through, in one middleware: read the body, apply
 * the request limits, select the operation, validate, run it and answer; any error is answered as
 * the error boundary does, in the chosen operation's words. One function rather than a chain of
 * four: each link of a Koa chain is an async function and a promise more on every request.
 */
function operationRoute(entry: PathEntry, deps: RouterDeps, readBody: (ctx: Context) => Promise<ParsedBody>): Middleware {
  const { httpStatus, logger } = deps
  const limits = rateLimitRequests(deps.services.rateLimits)
  const readForwarded = forwardedReader(deps.cluster, deps.bodyLimitBytes)
  const all = operationsOf(entry)
  const fastChecks = new Map(all.map(operation => [operation, compileBodyCheck(operation.schema)]))
  const byName = new Map(all.map(operation => [operation.name, operation]))
  const select = operationSelector(entry)
  const run = async (ctx: Context, body: ParsedBody) => {
    const operation = select(body)
    if (!operation) throw new GatewayError('invalid-input')
    ctx.state.gatewayOperation = operation.name
    const [error, input] = validateBody(body.fields, operation.schema, fastChecks.get(operation))
    if (error) {
      logger.debug({ operation: operation.name, field: error instanceof StructError ? error.path.join('.') : undefined }, 'invalid request')
      throw new GatewayError('invalid-input')
    }
    const context = new RequestContext(ctx, entry.path, deps, body.uploads)
    try {
      const reply = await operation.handle(input, context)
      sendAnswer(ctx, httpStatus, { status: 200, ...reply })
    } catch (err) {
      if (!(err instanceof HeldElsewhere)) throw err
      // The device's session lives on another instance: that one answers (cluster mode).
      await forwardToHolder(ctx, deps.cluster, err, { path: entry.path, body, baseUrl: context.baseUrl, operation: operation.name })
    }
  }
  const budget = deps.services.mediaBudget
  return async function gatewayOperation(ctx: Context) {
    try {
      holdLargeBody(ctx, budget)
      if (readForwarded) await readForwarded(ctx)
      const body = await readBody(ctx)
      ctx.state.gatewayBody = body
      // A forwarded request was counted by the instance the client called.
      await (limits && !ctx.state.gatewayForwardedBy ? limits(ctx, () => run(ctx, body)) : run(ctx, body))
    } catch (err) {
      answerError(ctx, httpStatus, logger, err, byName.get(ctx.state.gatewayOperation))
    } finally {
      ;(ctx.state.gatewayMediaHold as MediaHold | undefined)?.release()
    }
  }
}

/** Bodies from this size on (declared by Content-Length) count against the media budget while the request lasts. */
const MEDIA_BODY_BYTES = 64 * 1024

/**
 * A body large enough to carry media holds its declared size of the process's media budget until
 * the request is answered; past the budget it is answered 429 without being kept (its bytes are
 * read and dropped, so the answer reaches the client).
 */
function holdLargeBody(ctx: Context, budget: MediaBudget): void {
  const declared = ctx.req.headers['content-length']
  if (declared === undefined || declared.length < 5) return // fewer than 10,000 bytes at a glance
  const bytes = Number(declared)
  if (!(bytes >= MEDIA_BODY_BYTES)) return
  try {
    ctx.state.gatewayMediaHold = budget.hold(bytes)
  } catch (err) {
    ctx.req.resume()
    throw err
  }
}


/**
 * Validate (and coerce) a body: the fast check when the schema has one and it accepts the body, else
 * superstruct (which also words every refusal). A value a struct cannot even inspect (e.g. `{"toString": "x"}`, which
 * superstruct fails to print in its error message) is a refusal like any other, never a 500.
 */
function validateBody(fields: Record<string, unknown>, schema: Struct<any, any>, fastCheck: FastCheck | undefined): [Error | undefined, unknown] {
  const checked = fastCheck?.(fields) ?? UNSURE
  if (checked !== UNSURE) return [undefined, checked]
  try {
    return validate(fields, schema, { coerce: true })
  } catch (err) {
    return [err instanceof Error ? err : new Error(String(err)), undefined]
  }
}

function isPresent(value: unknown): boolean {
  if (value === undefined || value === null) return false
  if (typeof value === 'string') return value.trim() !== ''
  return true
}

/**
 * What a handler gets besides its input; the base URL and client IP are read only if it asks. A
 * class, not an object literal with getters: V8 builds such a literal through its slow path and
 * allocates it where the collector keeps it (with the request it holds) far longer than needed.
 */
class RequestContext implements OperationContext {
  private url: string | undefined

  constructor(
    private readonly ctx: Context,
    private readonly path: string,
    private readonly deps: RouterDeps,
    readonly uploads: ReadonlyMap<string, UploadedFile>,
  ) {}

  get services(): OperationServices {
    return this.deps.services
  }

  get baseUrl(): string {
    return (this.url ??= this.deps.baseUrl ?? forwardedFrom(this.ctx)?.baseUrl ?? baseUrlOf(this.ctx, this.path))
  }

  get clientIp(): string {
    return forwardedFrom(this.ctx)?.clientIp ?? this.ctx.ip
  }

  get mediaHold(): MediaHold {
    return (this.ctx.state.gatewayMediaHold ??= this.deps.services.mediaBudget.hold()) as MediaHold
  }

  get forwardedBy(): string | undefined {
    return this.ctx.state.gatewayForwardedBy as string | undefined
  }
}

/** The request's origin plus the prefix the gateway is mounted under. */
function baseUrlOf(ctx: Context, operationPath: string): string {
  const prefix = ctx.path.endsWith(operationPath) ? ctx.path.slice(0, -operationPath.length) : ''
  return `${ctx.protocol}://${ctx.host}${prefix}`
}
