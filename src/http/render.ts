import type { Context, Next } from 'koa'
import type { Logger } from '../logger.ts'
import { answerCodeOf, errorAnswer } from '../operations/error-answers.ts'
import type { Operation } from '../operations/operation.ts'
import { requestState, routeOf } from './request-state.ts'
import { HOLDER_HEADER } from '../client-api.ts'

/** How HTTP status codes relate to the body's `status`. */
export type HttpStatusMode = 'mirror' | 'always200'

/** The HTTP code of an answer whose body says `status`, as the status mode chooses. */
export function httpStatusOf(mode: HttpStatusMode, status: number): number {
  return mode === 'always200' ? 200 : status
}

/** Write a JSON answer with the HTTP code chosen by the status mode. */
export function sendAnswer(ctx: Context, mode: HttpStatusMode, body: { status: number; message: string } & Record<string, unknown>) {
  ctx.status = httpStatusOf(mode, body.status)
  // Typed here: Koa would look the type of an object body up by name (mime-types) on every answer.
  ctx.set('Content-Type', JSON_TYPE)
  ctx.body = body
}

/** The Content-Type of every JSON answer (what Koa gives an object body). */
const JSON_TYPE = 'application/json; charset=utf-8'

/** Middleware, the error boundary: each error as `{status, message, ...extra}` in the operation's words (unexpected: logged, 500); media hold given back. */
export function answerErrors(mode: HttpStatusMode, logger: Logger) {
  return function gatewayAnswer(ctx: Context, next: Next) {
    const state = requestState(ctx)
    // Chained, not awaited in an async function: a promise less per request.
    return next().then(
      () => state.mediaHold?.release(),
      err => {
        try {
          answerError(ctx, mode, logger, state.errorMapper ? state.errorMapper(err) : err, state.operation)
        } finally {
          state.mediaHold?.release()
        }
      },
    )
  }
}

/** Answer `err` as answerErrors does, worded as `own` says where it has its own answer. */
export function answerError(ctx: Context, mode: HttpStatusMode, logger: Logger, err: unknown, own?: Partial<Pick<Operation, 'answers' | 'errorExtra'>>): void {
  const answer = errorAnswer(err, own?.answers)
  const code = answerCodeOf(err)
  logger[answer.status >= 500 ? 'error' : 'debug']({ err, code, path: routeOf(ctx) }, answer.message)
  if (answer.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(answer.retryAfterSeconds))
  // A refusal, a not-found or a move (503) never names the device's holder.
  if (answer.status === 401 || answer.status === 404 || answer.status === 503) ctx.remove(HOLDER_HEADER)
  sendAnswer(ctx, mode, { status: answer.status, message: answer.message, ...answer.extra, ...own?.errorExtra })
}

/** The part of the path the client called before `route`, matched as the router does (case aside): the prefix the gateway is mounted under, also where a mount (koa-mount) takes it off `ctx.path`. */
export function mountPrefix(ctx: Context, route: string): string {
  const path = ctx.originalUrl.replace(/^[a-z][\w+.-]*:\/\/[^/?#]*|[?#].*$/gis, '').replace(/\/+$/, '') // an absolute-form target's origin, the query off
  return path.toLowerCase().endsWith(route.toLowerCase()) ? path.slice(0, -route.length) : ''
}

/** Text made safe to put in HTML, attribute values included. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, c => `&#${c.charCodeAt(0)};`)
}
