import type { Context, Middleware, Next } from 'koa'
import type { MediaBudget } from '../domain/messaging/media-budget.ts'
import { bodyReader } from './body.ts'
import { forwardedRequestReader } from './forwarding/receive.ts'
import type { ClusterRouting } from './forwarding/to-holder.ts'
import { requestState, type RequestState } from './request-state.ts'

/** What readRequestBody needs. */
interface BodyDeps {
  bodyLimitBytes: number
  /** How long a request body may take to arrive (408 past it). */
  bodyTimeoutMs: number
  mediaBudget: MediaBudget
  /** Cluster mode: requests forwarded by another instance are verified. */
  cluster?: ClusterRouting
}

/** Bodies from this size on (declared by Content-Length) count against the media budget while the request lasts. */
const MEDIA_BODY_BYTES = 64 * 1024

/**
 * Middleware: the request's body, parsed (see bodyReader). A body large enough to carry media holds
 * its declared size of the process's media budget until the request is answered (past the budget:
 * 429, its bytes read and dropped); in cluster mode a request forwarded by another instance is
 * verified first against the cluster secret (403 when wrong, stale or replayed: see
 * forwardedRequestReader) and marked in the request state.
 */
export function readRequestBody(deps: BodyDeps): Middleware {
  const readBody = bodyReader(deps.bodyLimitBytes, deps.bodyTimeoutMs)
  // Outside cluster mode a forwarded-looking request is an ordinary one, with no trust given.
  const readForwarded = deps.cluster ? forwardedRequestReader(deps.cluster.secret, deps.bodyLimitBytes, deps.cluster.instances.id) : undefined
  const budget = deps.mediaBudget
  return async function gatewayBody(ctx: Context, next: Next) {
    const state = requestState(ctx)
    holdLargeBody(ctx, state, budget)
    if (readForwarded) await readForwarded(ctx)
    state.body = await readBody(ctx)
    return next()
  }
}

// --- Internal helpers ---

/** A large body's hold of the media budget, kept in the request state (given back once answered). */
function holdLargeBody(ctx: Context, state: RequestState, budget: MediaBudget): void {
  const declared = ctx.req.headers['content-length']
  if (declared === undefined || declared.length < 5) return // fewer than 10,000 bytes at a glance
  const bytes = Number(declared)
  if (!(bytes >= MEDIA_BODY_BYTES)) return
  try {
    state.mediaHold = budget.hold(bytes)
  } catch (err) {
    ctx.req.resume()
    throw err
  }
}
