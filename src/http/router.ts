import Router from '@koa/router'
import type { Context, Middleware } from 'koa'
import { StructError, validate, type Struct } from 'superstruct'
import { GatewayError, Messages } from '../errors.ts'
import type { Services } from '../services.ts'
import { bodyReader, type ParsedBody, type UploadedFile } from './body.ts'
import { compileBodyCheck, UNSURE, type FastCheck } from './fast-check.ts'
import type { Operation, OperationContext, PathEntry } from './operation.ts'
import { answerError, errorBoundary, sendAnswer } from './render.ts'
import { observeRequests } from './observe.ts'
import { rateLimitRequests } from './rate-limit.ts'
import { sharePageRoutes } from './share-page.ts'
import { mediaRoutes } from './media-route.ts'

/** The gateway's router, and what lets `routes()` dispatch operation requests without it. */
export interface GatewayRouter {
  router: Router
  /** The middleware of each operation path (the route the router has for it), by exact path. */
  operations: ReadonlyMap<string, Middleware>
  /** The request observer the router runs before every route. */
  observe: Middleware
}

/** Build the gateway's router: every path of the table, plus the QR share pages and media links. */
export function buildRouter(table: PathEntry[], services: Services): GatewayRouter {
  const { options, logger } = services
  const router = new Router()
  const observe = observeRequests(services.events)
  router.use(observe)
  const readBody = bodyReader(options.bodyLimitBytes)
  const limits = rateLimitRequests(services)
  const operations = new Map<string, Middleware>()
  for (const entry of table) {
    const route = operationRoute(entry, services, readBody, limits)
    operations.set(entry.path, route)
    router.post(entry.path, route)
  }
  const boundary = errorBoundary(options.httpStatus, logger)
  sharePageRoutes(router, services, boundary)
  mediaRoutes(router, services, boundary)
  return { router, operations, observe }
}

/** The operation a body selects on a path, or undefined (then 401 `validation.required`). */
export function selectOperation(entry: PathEntry, body: ParsedBody): Operation | undefined {
  return operationSelector(entry)(body)
}

/** selectOperation for one path, with the distinguishing fields of its operations listed once. */
function operationSelector(entry: PathEntry): (body: ParsedBody) => Operation | undefined {
  const choices = entry.operations.map(operation => ({ operation, fields: (Array.isArray(operation.field) ? operation.field : [operation.field]).filter(field => field !== undefined) }))
  return body => {
    for (const { operation, fields } of choices) {
      for (const field of fields) if (isPresent(body.fields[field]) || body.uploads.has(field)) return operation
    }
    return entry.fallback
  }
}

// --- Internal helpers ---

type Limits = ReturnType<typeof rateLimitRequests>

/**
 * Everything a request on an operation path goes through, in one middleware: read the body, apply
 * the request limits, select the operation, validate, run it and answer; any error is answered as
 * the error boundary does. One function rather than a chain of four: each link of a Koa chain is
 * an async function and a promise more on every request.
 */
function operationRoute(entry: PathEntry, services: Services, readBody: (ctx: Context) => Promise<ParsedBody>, limits: Limits): Middleware {
  const { options, logger } = services
  const fastChecks = new Map([...entry.operations, ...(entry.fallback ? [entry.fallback] : [])].map(operation => [operation, compileBodyCheck(operation.schema)]))
  const select = operationSelector(entry)
  const run = async (ctx: Context, body: ParsedBody) => {
    const operation = select(body)
    if (!operation) throw new GatewayError(401, Messages.required)
    ctx.state.gatewayOperation = operation.name
    const [error, input] = validateBody(body.fields, operation.schema, fastChecks.get(operation))
    if (error) {
      const invalid = operation.invalid ?? { status: 401, message: Messages.required }
      logger.debug({ operation: operation.name, field: error instanceof StructError ? error.path.join('.') : undefined }, 'invalid request')
      throw new GatewayError(invalid.status, invalid.message, invalid.extra)
    }
    const reply = await operation.handle(input, new RequestContext(ctx, entry.path, services, body.uploads))
    sendAnswer(ctx, options.httpStatus, { status: 200, ...reply })
  }
  return async function gatewayOperation(ctx: Context) {
    try {
      const body = await readBody(ctx)
      ctx.state.gatewayBody = body
      await (limits ? limits(ctx, () => run(ctx, body)) : run(ctx, body))
    } catch (err) {
      answerError(ctx, options.httpStatus, logger, err)
    }
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
    readonly services: Services,
    readonly uploads: ReadonlyMap<string, UploadedFile>,
  ) {}

  get baseUrl(): string {
    return (this.url ??= baseUrlOf(this.ctx, this.path, this.services))
  }

  get clientIp(): string {
    return this.ctx.ip
  }
}

/** The configured base URL, or the request's origin plus the prefix the gateway is mounted under. */
function baseUrlOf(ctx: Context, operationPath: string, services: Services): string {
  if (services.options.baseUrl) return services.options.baseUrl
  const prefix = ctx.path.endsWith(operationPath) ? ctx.path.slice(0, -operationPath.length) : ''
  return `${ctx.protocol}://${ctx.host}${prefix}`
}
