import type { Context, Next } from 'koa'
import type { Logger } from '../logger.ts'
import { answerCodeOf, errorAnswer, type AnswerCode, type ErrorAnswer } from '../operations/error-answers.ts'
import { requestState } from './request-state.ts'
import { HOLDER_HEADER } from '../client-api.ts'

/** How HTTP status codes relate to the body's `status`. */
export type HttpStatusMode = 'mirror' | 'always200'

/** Write a JSON answer with the HTTP code chosen by the status mode. */
export function sendAnswer(ctx: Context, mode: HttpStatusMode, body: { status: number; message: string } & Record<string, unknown>) {
  ctx.status = mode === 'always200' ? 200 : body.status
  // The header itself: Koa's `ctx.type` setter looks the type up in the MIME database each time.
  ctx.set('Content-Type', 'application/json; charset=utf-8')
  ctx.body = body
}

/**
 * Error rendering scoped to the gateway's routes: every error becomes `{status, message, ...extra}`.
 * Unexpected errors are logged with their cause and answered 500 without details.
 */
export function errorBoundary(mode: HttpStatusMode, logger: Logger) {
  return async function gatewayErrors(ctx: Context, next: Next) {
    try {
      await next()
    } catch (err) {
      answerError(ctx, mode, logger, err)
    }
  }
}

/**
 * The error boundary of an operation path (middleware, first on the path): any error is answered as
 * errorBoundary does, in the selected operation's words once one is selected; and the request's hold
 * of the media budget is given back once it is answered.
 */
export function answerErrors(mode: HttpStatusMode, logger: Logger) {
  return async function gatewayAnswer(ctx: Context, next: Next) {
    const state = requestState(ctx)
    try {
      await next()
    } catch (err) {
      answerError(ctx, mode, logger, err, state.operation)
    } finally {
      state.mediaHold?.release()
    }
  }
}

/** How an operation words its refusals (see Operation.answers and Operation.errorExtra). */
interface ErrorWording {
  answers?: Partial<Record<AnswerCode, ErrorAnswer>>
  errorExtra?: Record<string, unknown>
}

/** Answer `err` as errorBoundary does, worded as `own` says where it has its own answer. */
export function answerError(ctx: Context, mode: HttpStatusMode, logger: Logger, err: unknown, own?: ErrorWording): void {
  const answer = errorAnswer(err, own?.answers)
  const code = answerCodeOf(err)
  if (answer.status >= 500) logger.error({ err, code, path: ctx.path }, answer.message)
  else logger.debug({ err, code, path: ctx.path }, answer.message)
  if (answer.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(answer.retryAfterSeconds))
  // Whether a device exists (and where) is never told with a refusal or a not-found, nor named as
  // held here by an answer that says it is moving (a lease let go mid-request: 503).
  if (answer.status === 401 || answer.status === 404 || answer.status === 503) ctx.remove(HOLDER_HEADER)
  sendAnswer(ctx, mode, { status: answer.status, message: answer.message, ...answer.extra, ...own?.errorExtra })
}
