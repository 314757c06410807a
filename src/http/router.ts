import Router from '@koa/router'
import type { Context, Middleware } from 'koa'
import { StructError, validate, type Struct } from 'superstruct'
import { GatewayError, Messages } from '../errors.ts'
import type { Services } from '../services.ts'
import { parseBody, type ParsedBody } from './body.ts'
import type { Operation, PathEntry } from './operation.ts'
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
  for (const entry of table) router.post(entry.path, boundary, body, limits, dispatch(entry, services))
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
  return async function gatewayOperation(ctx: Context) {
    const body = ctx.state.gatewayBody as ParsedBody
    const operation = selectOperation(entry, body)
    if (!operation) throw new GatewayError(401, Messages.required)
    ctx.state.gatewayOperation = operation.name
    const [error, input] = validateBody(body.fields, operation.schema)
    if (error) {
      const invalid = operation.invalid ?? { status: 401, message: Messages.required }
      services.logger.debug({ operation: operation.name, field: error instanceof StructError ? error.path.join('.') : undefined }, 'invalid request')
      throw new GatewayError(invalid.status, invalid.message, invalid.extra)
    }
    const reply = await operation.handle(input, { services, uploads: body.uploads, baseUrl: baseUrlOf(ctx, entry.path, services), clientIp: ctx.ip })
    sendAnswer(ctx, services.options.httpStatus, { status: 200, ...reply })
  }
}

/**
 * Validate (and coerce) a body. A value a struct cannot even inspect (e.g. `{"toString": "x"}`, which
 * superstruct fails to print in its error message) is a refusal like any other, never a 500.
 */
function validateBody(fields: Record<string, unknown>, schema: Struct<any, any>): [Error | undefined, unknown] {
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

/** The configured base URL, or the request's origin plus the prefix the gateway is mounted under. */
function baseUrlOf(ctx: Context, operationPath: string, services: Services): string {
  if (services.options.baseUrl) return services.options.baseUrl
  const prefix = ctx.path.endsWith(operationPath) ? ctx.path.slice(0, -operationPath.length) : ''
  return `${ctx.protocol}://${ctx.host}${prefix}`
}
