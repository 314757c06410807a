import type { Context, Middleware, Next } from 'koa'
import type { GatewayEvents } from '../events.ts'
import { requestState, routeOf } from './request-state.ts'

/** Middleware: every answered request as a `request` event while someone listens (the status is a JSON body's `status`, else the HTTP status); no async frame while nobody does. */
export function observeRequests(events: GatewayEvents): Middleware {
  return (ctx: Context, next: Next) => (events.listenerCount('request') === 0 ? next() : observed(ctx, next))
  async function observed(ctx: Context, next: Next) {
    const started = performance.now()
    let status = 500 // unless answered
    try {
      await next()
      status = answerStatus(ctx)
    } finally {
      const operation = requestState(ctx).operation?.name
      events.emit('request', {
        method: ctx.method,
        route: routeOf(ctx),
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
