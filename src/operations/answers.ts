import { literal, object, optional, string, type Struct } from 'superstruct'
import { Messages } from '../errors.ts'
import type { ErrorAnswer } from '../http/operation.ts'
import { toGatewayError } from '../http/render.ts'
import { TransportError } from '../ports/transport.ts'

/**
 * The success answers and error answers the operations declare: the operation table carries them,
 * so the OpenAPI document, the client types and the tests all read one source.
 */

/** A success answer: `{status: 200, message}` plus exactly `fields` (an unexpected field fails it). */
export function answer<S extends Record<string, Struct<any, any>>>(fields: S) {
  return object({ status: literal(200), message: string(), ...fields })
}

/** Operations 8 to 16 and OTP sends: the network's message id, or the schedule's id and time. */
export const sentAnswer = answer({
  /** The network's message id (absent for a read receipt), or the schedule's id with `agendamento`. */
  id: optional(string()),
  agendamento: optional(string()),
})

/** `validation.required` with status 401: a missing or invalid field, or an unknown or expired authkey. */
export const required: ErrorAnswer = { status: 401, message: Messages.required }

/** The errors of an operation that names a device of the account by `appkey`. */
export const deviceErrors: ErrorAnswer[] = [required, { status: 404, message: Messages.deviceNotFound }]

/** The errors of a network call through the device's send queue (sends, groups, read receipts). */
export const queueErrors: ErrorAnswer[] = [
  { status: 409, message: Messages.disconnected },
  { status: 429, message: Messages.sendQueueFull },
  transportError('rate-limited'),
  { status: 504, message: Messages.sendQueueTimeout },
  { status: 504, message: Messages.sendStalled },
  transportError('timeout'),
  transportError('failed'),
  { status: 503, message: Messages.shuttingDown },
]

/** The errors of operations 8 to 16 (send now, or schedule with `agendamento`). */
export const sendErrors: ErrorAnswer[] = [...deviceErrors, ...queueErrors, transportError('invalid')]

/** The errors of a send that targets an earlier message (reaction, delete, read receipt). */
export const targetErrors: ErrorAnswer[] = [...sendErrors, { status: 404, message: Messages.messageNotFound }]

/** The errors of fetching a media URL (or a carousel card image). */
export const mediaErrors: ErrorAnswer[] = [
  { status: 400, message: Messages.mediaRefused },
  { status: 400, message: Messages.mediaBadStatus },
  { status: 400, message: Messages.mediaTimeout },
  { status: 400, message: Messages.mediaUnreachable },
  { status: 413, message: Messages.mediaTooLarge },
]

// --- Internal helpers ---

/** The answer a transport failure is rendered as (src/http/render.ts decides it). */
function transportError(code: TransportError['code']): ErrorAnswer {
  const { status, message } = toGatewayError(new TransportError(code, code))
  return { status, message }
}
