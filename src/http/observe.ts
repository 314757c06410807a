import type { Context, Middleware, Next } from 'koa'
import type { GatewayEvents } from '../events.ts'
import { requestState } from './request-state.ts'

/** Middleware: every answered request as a `request` event while someone listens (the status is a JSON body's `status`, else the HTTP status). */
export function observeRequests(events: GatewayEvents): Middleware {
  return async function gatewayObserve(ctx: Context, next: Next) {
    if (events.listenerCount('request') === 0) return next()
    const started = performance.now()
    let status = 500 // unless answered
    try {
      await next()
      status = answerStatus(ctx)
    } finally {
      const operation = requestState(ctx).operation?.name
      events.emit('request', {
        method: ctx.method,
        route: String((ctx as { _matchedRoute?: unknown })._matchedRoute ?? ctx.path),
        ...(operation ? { operation } : {}),
        status,
        durationMs: performance.now() - started,
      })
    }
  }
}

// --- Internal helpers ---

function answerStatus(ctx: Context): number {
  const body = ctx.body as { status?: unknown } | null | undefined
  const inBody = body && typeof body === 'object' && !Buffer.isBuffer(body) ? body.status : undefined
  return typeof inBody === 'number' && Number.isInteger(inBody) ? inBody : ctx.status
}
