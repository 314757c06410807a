import Router from '@koa/router'
import type { Context, Middleware } from 'koa'
import { StructError, validate, type Struct } from 'superstruct'
import { GatewayError, Messages } from '../errors.ts'
import type { Services } from '../services.ts'
import { parseBody, type ParsedBody, type UploadedFile } from './body.ts'
import { compileBodyCheck, UNSURE, type FastCheck } from './fast-check.ts'
import type { Operation, OperationContext, PathEntry } from './operation.ts'
import { errorBoundary, sendAnswer } from './render.ts'
import { observeRequests } from './observe.ts'
import { rateLimitRequests } from './rate-limit.ts'
import { sharePageRoutes } from './share-page.ts'
import { mediaRoutes } from './media-route.ts'

/** Build the gateway's router: every path of the table, plus the QR share pages. */
export function buildRouter(table: PathEntry[], services: Services): Router {
  const { options, logger } = services
  const router = new Router()
  const boundary = errorBoundary(options.httpStatus, logger)
  const body = parseBody(options.bodyLimitBytes)
  router.use(observeRequests(services.events))
  const limits = rateLimitRequests(services)
  const before = limits ? [boundary, body, limits] : [boundary, body]
  for (const entry of table) router.post(entry.path, ...before, dispatch(entry, services))
  sharePageRoutes(router, services, boundary)
  mediaRoutes(router, services, boundary)
  return router
}

/** The operation a body selects on a path, or undefined (then 401 `validation.required`). */
export function selectOperation(entry: PathEntry, body: ParsedBody): Operation | undefined {
  for (const operation of entry.operations) {
    const fields = Array.isArray(operation.field) ? operation.field : [operation.field]
    if (fields.some(field => field !== undefined && (isPresent(body.fields[field]) || body.uploads.has(field)))) return operation
  }
  return entry.fallback
}

// --- Internal helpers ---

function dispatch(entry: PathEntry, services: Services): Middleware {
  const fastChecks = new Map([...entry.operations, ...(entry.fallback ? [entry.fallback] : [])].map(operation => [operation, compileBodyCheck(operation.schema)]))
  return async function gatewayOperation(ctx: Context) {
    const body = ctx.state.gatewayBody as ParsedBody
    const operation = selectOperation(entry, body)
    if (!operation) throw new GatewayError(401, Messages.required)
    ctx.state.gatewayOperation = operation.name
    const [error, input] = validateBody(body.fields, operation.schema, fastChecks.get(operation))
    if (error) {
      const invalid = operation.invalid ?? { status: 401, message: Messages.required }
      services.logger.debug({ operation: operation.name, field: error instanceof StructError ? error.path.join('.') : undefined }, 'invalid request')
      throw new GatewayError(invalid.status, invalid.message, invalid.extra)
    }
    const reply = await operation.handle(input, operationContext(ctx, entry.path, services, body))
    sendAnswer(ctx, services.options.httpStatus, { status: 200, ...reply })
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
    readonly uploads: Map<string, UploadedFile>,
  ) {}

  get baseUrl(): string {
    return (this.url ??= baseUrlOf(this.ctx, this.path, this.services))
  }

  get clientIp(): string {
    return this.ctx.ip
  }
}

function operationContext(ctx: Context, path: string, services: Services, body: ParsedBody): OperationContext {
  return new RequestContext(ctx, path, services, body.uploads)
}

/** The configured base URL, or the request's origin plus the prefix the gateway is mounted under. */
function baseUrlOf(ctx: Context, operationPath: string, services: Services): string {
  if (services.options.baseUrl) return services.options.baseUrl
  const prefix = ctx.path.endsWith(operationPath) ? ctx.path.slice(0, -operationPath.length) : ''
  return `${ctx.protocol}://${ctx.host}${prefix}`
}
