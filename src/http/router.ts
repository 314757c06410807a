import Router from '@koa/router'
import type { Context, Middleware } from 'koa'
import compose from 'koa-compose'
import type { GatewayEvents } from '../events.ts'
import type { Logger } from '../logger.ts'
import type { OperationServices, PathEntry } from '../operations/operation.ts'
import type { SessionRouting } from '../domain/cluster/session-routing.ts'
import { answerErrors, mountPrefix, type HttpStatusMode } from './render.ts'
import { observeRequests } from './observe.ts'
import type { RequestDrain } from './drain.ts'
import { rateLimitRequests } from './rate-limit.ts'
import { sharePageRoutes, type SharePageDeps } from './share-page.ts'
import { mediaRoutes, type MediaRouteDeps } from './media-route.ts'
import { routeToHolder, type ClusterRouting } from './forwarding/to-holder.ts'
import { BATCH_PATH, coalescedForwards } from './forwarding/coalesce.ts'
import { forwardedBatch, forwardedBody } from './forwarding/batch-receive.ts'
import { readRequestBody } from './request-body.ts'
import { answerWrongMethods } from './wrong-method.ts'
import { operationSelector, selectOperation } from './select-operation.ts'
import { authenticate } from './authenticate.ts'
import { runOperation } from './run-operation.ts'
import type { RequestState } from './request-state.ts'

/** What the gateway's router is built from. */
interface RouterDeps extends SharePageDeps, MediaRouteDeps {
  services: OperationServices
  routing: SessionRouting
  events: GatewayEvents
  logger: Logger
  httpStatus: HttpStatusMode
  bodyLimitBytes: number
  bodyTimeoutMs: number
  /** The configured public URL (else each request's origin and mount path). */
  baseUrl?: string
  /** Cluster mode: how a request reaches the device's holder. */
  cluster?: ClusterRouting
  /** The steps first on every gateway route (see frontSteps). */
  front: Middleware[]
}

/** The steps first on every route of the gateway (service routes included): the request observed and counted by the shutdown drain. A route's chain takes them as steps of its own, not as one composed middleware (a dispatch less per request). */
export function frontSteps(events: GatewayEvents, drain: RequestDrain): Middleware[] {
  return [observeRequests(events), drain.middleware()]
}

/** Build the gateway's router: the table's paths (one middleware per concern, in the order below; docs/architecture.md), QR share pages, media links. */
export function buildRouter(table: readonly PathEntry[], deps: RouterDeps): Router {
  const router = new Router()
  // Each route's middleware composed once, not by the router per request (its chain of 13 cost ~5% of a send's CPU, bench/README.md).
  const boundary = compose<Context>([...deps.front, answerErrors('mirror', deps.logger)]) // GET routes (pages, media): HTTP codes whatever httpStatus says
  const shared: Middleware[] = [...deps.front, answerErrors(deps.httpStatus, deps.logger), readRequestBody({ ...deps, mediaBudget: deps.services.mediaBudget })]
  const auth = authenticate(deps.services)
  // Cluster mode: forwards to one holder coalesce (coalesce.ts); a batch of them runs each on its path's chain, its body already read.
  const forward = coalescedForwards()
  const batched = new Map<string, Middleware>()
  const batchFront = [observeRequests(deps.events), answerErrors(deps.httpStatus, deps.logger), forwardedBody]
  for (const entry of table) {
    const baseUrlOf = (ctx: Context, state: RequestState) =>
      deps.baseUrl ?? state.forwardedFrom?.baseUrl ?? `${ctx.protocol}://${ctx.host}${mountPrefix(ctx, entry.path)}`
    const { early, holder } = routeToHolder(entry, { ...deps, baseUrlOf, forward })
    const limit = rateLimitRequests(deps.services.rateLimits, operationSelector(entry))
    const own = [...(limit ? [limit] : []), ...early, selectOperation(entry, deps.logger), auth, holder, runOperation({ ...deps, baseUrlOf })]
    router.post(entry.path, compose<Context>([...shared, ...own]))
    if (deps.cluster) batched.set(entry.path, compose<Context>([...batchFront, ...own]))
  }
  if (deps.cluster) router.post(BATCH_PATH, compose<Context>([...shared, forwardedBatch(batched, deps.httpStatus)]))
  sharePageRoutes(router, deps, boundary)
  mediaRoutes(router, deps, boundary)
  answerWrongMethods(router)
  return router
}
