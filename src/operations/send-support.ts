import { GatewayError } from '../errors.ts'
import { CLOCK_SKEW_ALLOWANCE_MS } from '../domain/clock.ts'
import { optional, string, type, type Struct } from '../schema/structs.ts'
import { answer, defineOperation, deviceByAppkey, type DeviceNeed, type Operation, type OperationContext, type ReplyOf } from './operation.ts'
import type { Action } from '../domain/messaging/actions.ts'
import { parseScheduleTime } from '../domain/messaging/schedule-time.ts'
import { sendFields } from './messaging-fields.ts'
import { sendErrors } from './error-answers.ts'

/** Furthest a message can be scheduled ahead. */
const MAX_SCHEDULE_AHEAD_MS = 366 * 86_400_000

/** The answer of operations 8 to 16: the network's message id, or the schedule's id and time. */
const sentAnswer = answer({ id: optional(string()), agendamento: optional(string()) })

const sendNeed: DeviceNeed<{ appkey: string; agendamento?: string }> = deviceByAppkey(({ agendamento }) =>
  agendamento === undefined ? 'connected' : undefined,
)

type SendSchema<F extends Record<string, Struct<any, any>>> = ReturnType<typeof type<typeof sendFields & F>>

/** A send operation (8 to 16): `fields` after the send fields, sendErrors unless it says; needs the open session sent now, the record when scheduled. */
export function sendOperation<N extends string, F extends Record<string, Struct<any, any>>>({
  fields,
  errors = sendErrors,
  ...spec
}: Omit<Operation<SendSchema<F>, typeof sentAnswer>, 'schema' | 'answer' | 'errors' | 'device'> & { name: N; fields: F; errors?: Operation['errors'] }) {
  const schema = type({ ...sendFields, ...fields }) as SendSchema<F>
  return defineOperation({ ...spec, answer: sentAnswer, errors, schema, device: sendNeed as DeviceNeed<any> })
}

/** The handler of operations 8 to 16: the built action, stored for later with `agendamento`, else done now on the device's open session. */
export function sendOrSchedule<I extends { agendamento?: string }>(
  sent: string | ((input: I) => string),
  build: (input: I, context: OperationContext) => Action | Promise<Action>,
): (input: I, context: OperationContext) => Promise<ReplyOf<typeof sentAnswer>> {
  const schedule = async (input: I, context: OperationContext) => {
    // Malformed, impossible, past (beyond the clock skew allowance) or over a year ahead: refused.
    const now = Date.now()
    const time = parseScheduleTime(input.agendamento!, context.services.settings.timeZone, now, CLOCK_SKEW_ALLOWANCE_MS)
    if (!time || time.at < now - CLOCK_SKEW_ALLOWANCE_MS || time.at > now + MAX_SCHEDULE_AHEAD_MS) throw new GatewayError('invalid-input')
    const item = await context.services.messaging.scheduler.schedule(context.device, await build(input, context), time)
    return { message: 'Mensagem agendada.', id: item.id, agendamento: item.agendamento }
  }
  const perform = (input: I, context: OperationContext, action: Action) =>
    context.services.messaging.messenger.perform(context.device, action, { status: context.status }).then(id => {
      const message = typeof sent === 'string' ? sent : sent(input)
      return id === undefined ? { message } : { message, id }
    })
  return (input, context) => {
    if (input.agendamento !== undefined) return schedule(input, context)
    // Chained, not awaited: a built action (a text's) costs no promise of its own.
    const action = build(input, context)
    return action instanceof Promise ? action.then(built => perform(input, context, built)) : perform(input, context, action)
  }
}
