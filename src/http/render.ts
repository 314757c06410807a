import type { Context, Next } from 'koa'
import { GatewayError, Messages } from '../errors.ts'
import { TransportError } from '../ports/transport.ts'
import { StorageUnavailableError } from '../store/guarded-storage.ts'
import type { Logger } from '../logger.ts'

/** How HTTP status codes relate to the body's `status`. */
export type HttpStatusMode = 'mirror' | 'always200'

/** The HTTP answer for a transport failure. */
const transportAnswers: Record<TransportError['code'], [number, string]> = {
  'not-connected': [409, Messages.disconnected],
  'already-connected': [409, Messages.alreadyConnected],
  'not-found': [404, 'Destino não encontrado na rede.'],
  'not-admin': [403, 'O dispositivo não é administrador do grupo.'],
  'rate-limited': [429, Messages.rateLimited],
  timeout: [504, Messages.transportTimeout],
  unreachable: [503, Messages.networkUnreachable],
  invalid: [400, 'Mensagem recusada pela rede.'],
  failed: [502, Messages.transportFailed],
}

/** Turn anything thrown inside the gateway into the error it is answered with. */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err
  if (err instanceof TransportError) {
    const [status, message] = transportAnswers[err.code]
    return new GatewayError(status, message, {}, { cause: err, headers: status === 429 ? { 'retry-after': '5' } : undefined })
  }
  if (err instanceof StorageUnavailableError) return new GatewayError(503, Messages.storageDown, {}, { cause: err, headers: { 'retry-after': '5' } })
  return new GatewayError(500, Messages.internal, {}, { cause: err })
}

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

/** Answer `err` as errorBoundary does (for handlers that catch their own errors). */
export function answerError(ctx: Context, mode: HttpStatusMode, logger: Logger, err: unknown): void {
  const answer = toGatewayError(err)
  if (answer.status >= 500) logger.error({ err: answer.cause ?? err, path: ctx.path }, answer.message)
  else if (answer.cause) logger.debug({ err: answer.cause, path: ctx.path }, answer.message)
  for (const [name, value] of Object.entries(answer.headers ?? {})) ctx.set(name, value)
  sendAnswer(ctx, mode, { status: answer.status, message: answer.message, ...answer.extra })
}
