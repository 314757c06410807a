import Router from '@koa/router'
import type { Context, Middleware } from 'koa'
import type { GatewayEvents } from '../events.ts'
import type { Logger } from '../logger.ts'
import type { OperationServices, PathEntry } from '../operations/operation.ts'
import type { SessionRouting } from '../domain/cluster/session-routing.ts'
import type { MediaRouteDeps } from './media-route.ts'
import type { SharePageDeps } from './share-page.ts'
import { answerErrors, errorBoundary, type HttpStatusMode } from './render.ts'
import { observeRequests } from './observe.ts'
import type { RequestDrain } from './drain.ts'
import { rateLimitRequests } from './rate-limit.ts'
import { sharePageRoutes } from './share-page.ts'
import { mediaRoutes } from './media-route.ts'
import { routeToHolder, type ClusterRouting } from './forwarding/to-holder.ts'
import { readRequestBody } from './request-body.ts'
import { selectOperation } from './select-operation.ts'
import { authenticate } from './authenticate.ts'
import { runOperation } from './run-operation.ts'
import type { RequestState } from './request-state.ts'

/** What the gateway's router is built from. */
interface RouterDeps extends SharePageDeps, MediaRouteDeps {
  /** What the operations call. */
  services: OperationServices
  /** Which instance works a request for a device (the holder of its session). */
  routing: SessionRouting
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

/**
 * Build the gateway's router: every path of the table, plus the QR share pages and media links.
 * Each concern is one middleware: on every route observe (the `request` event) and drain (the
 * shutdown); on an operation path, in order: answer errors (in the operation's words), read the
 * body (verifying a forwarded one), rate limit, select and validate the operation, authenticate
 * (the caller's account and device), route to the device's holder (or forward there), run the
 * operation and answer. They share what they learn through the request state (request-state.ts).
 */
export function buildRouter(table: readonly PathEntry[], deps: RouterDeps): Router {
  const router = new Router()
  router.use(observeRequests(deps.events))
  router.use(deps.drain.middleware())
  const shared: Middleware[] = [
    answerErrors(deps.httpStatus, deps.logger),
    readRequestBody({ ...deps, mediaBudget: deps.services.mediaBudget }),
    ...optional(rateLimitRequests(deps.services.rateLimits)),
  ]
  const auth = authenticate(deps.services)
  for (const entry of table) {
    const baseUrlOf = (ctx: Context, state: RequestState) => deps.baseUrl ?? state.forwardedFrom?.baseUrl ?? originOf(ctx, entry.path)
    const own = [selectOperation(entry, deps.logger), auth, routeToHolder(entry.path, { ...deps, baseUrlOf }), runOperation({ ...deps, baseUrlOf })]
    router.post(entry.path, ...shared, ...own)
  }
  const boundary = errorBoundary(deps.httpStatus, deps.logger)
  sharePageRoutes(router, deps, boundary)
  mediaRoutes(router, deps, boundary)
  return router
}

// --- Internal helpers ---

function optional<T>(value: T | undefined): T[] {
  return value === undefined ? [] : [value]
}

/** The request's origin plus the prefix the gateway is mounted under. */
function originOf(ctx: Context, operationPath: string): string {
  const prefix = ctx.path.endsWith(operationPath) ? ctx.path.slice(0, -operationPath.length) : ''
  return `${ctx.protocol}://${ctx.host}${prefix}`
}
