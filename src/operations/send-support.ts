import { GatewayError } from '../errors.ts'
import { CLOCK_SKEW_ALLOWANCE_MS } from '../domain/clock.ts'
import { optional, string } from 'superstruct'
import { answer, deviceByAppkey, type DeviceNeed, type OperationContext, type ReplyOf } from './operation.ts'
import type { Action } from '../domain/messaging/actions.ts'
import { parseScheduleTime } from '../domain/messaging/schedule-time.ts'

/** Furthest a message can be scheduled ahead. */
const MAX_SCHEDULE_AHEAD_MS = 366 * 86_400_000

/** The answer of operations 8 to 16 and OTP sends: the network's message id, or the schedule's id and time. */
export const sentAnswer = answer({ id: optional(string()), agendamento: optional(string()) })

/** Operations 8 to 16: sent now, they need the device's open session; scheduled (`agendamento`), its record only. */
export const sendNeed: DeviceNeed<{ appkey: string; agendamento?: string }> = deviceByAppkey(({ agendamento }) =>
  agendamento === undefined ? 'connected' : undefined,
)

/** The handler of operations 8 to 16: the built action, stored for later with `agendamento`, else done now on the device's open session. */
export function sendOrSchedule<I extends { agendamento?: string }>(
  sent: string | ((input: I) => string),
  build: (input: I, context: OperationContext) => Action | Promise<Action>,
): (input: I, context: OperationContext) => Promise<ReplyOf<typeof sentAnswer>> {
  return async (input, context) => {
    const { device } = context
    const { messaging, settings } = context.services
    if (input.agendamento !== undefined) {
      // Malformed, impossible, past (beyond the clock skew allowance) or over a year ahead: refused.
      const time = parseScheduleTime(input.agendamento, settings.timeZone)
      const now = Date.now()
      if (!time || time.at < now - CLOCK_SKEW_ALLOWANCE_MS || time.at > now + MAX_SCHEDULE_AHEAD_MS) throw new GatewayError('invalid-input')
      const item = await messaging.scheduler.schedule(device, await build(input, context), time)
      return { message: 'Mensagem agendada.', id: item.id, agendamento: item.agendamento }
    }
    const id = await messaging.messenger.perform(device, await build(input, context), { status: context.status })
    const message = typeof sent === 'string' ? sent : sent(input)
    return id === undefined ? { message } : { message, id }
  }
}
