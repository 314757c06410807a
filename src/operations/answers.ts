import { literal, object, optional, string, type Struct } from 'superstruct'
import type { AnswerCode } from './error-answers.ts'

/**
 * The success answers and the refusals the operations declare: the operation table carries them, so
 * the OpenAPI document, the client types and the tests all read one source (the refusals are worded
 * by src/operations/error-answers.ts).
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

/** The refusals of an operation that names a device of the account by `appkey`. */
export const deviceErrors: AnswerCode[] = ['invalid-input', 'unauthenticated', 'device-not-found']

/** The refusals of a network call through the device's send queue (sends, groups, read receipts). */
export const queueErrors: AnswerCode[] = [
  'not-connected',
  'send-queue-full',
  'rate-limited',
  'send-queue-timeout',
  'send-stalled',
  'timeout',
  'failed',
  'shutting-down',
]

/** The refusals of operations 8 to 16 (send now, or schedule with `agendamento`). */
export const sendErrors: AnswerCode[] = [...deviceErrors, ...queueErrors, 'invalid']

/** The refusals of a send that targets an earlier message (reaction, delete, read receipt). */
export const targetErrors: AnswerCode[] = [...sendErrors, 'message-not-found']

/** The refusals of fetching a media URL (or a carousel card image). */
export const mediaErrors: AnswerCode[] = ['media-refused', 'media-bad-status', 'media-timeout', 'media-unreachable', 'media-too-large', 'media-budget-exceeded']
