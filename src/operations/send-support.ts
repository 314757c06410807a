import { GatewayError } from '../errors.ts'
import { CLOCK_SKEW_ALLOWANCE_MS } from '../domain/clock.ts'
import { deviceByAppkey, type OperationContext, type ReplyOf } from './operation.ts'
import type { Action } from '../domain/messaging/actions.ts'
import { parseScheduleTime, type ScheduleTime } from '../domain/messaging/schedule-time.ts'
import type { sentAnswer } from './answers.ts'

/** Furthest a message can be scheduled ahead. */
const MAX_SCHEDULE_AHEAD_MS = 366 * 86_400_000

/** Operations 8 to 16: sent now, they need the device's open session; scheduled (`agendamento`), its record only. */
export const sendNeed = deviceByAppkey<{ appkey: string; agendamento?: string }>(({ agendamento }) => (agendamento === undefined ? 'connected' : undefined))

/**
 * The common path of operations 8 to 16, for the request's device: with `agendamento`, build the
 * action and store it for later (`{message, id, agendamento}`); without, build the action and do it
 * now on the device's open session (`{message, id}` with the network's message id).
 */
export async function sendOrSchedule(
  context: OperationContext,
  agendamento: string | undefined,
  build: () => Action | Promise<Action>,
  sentMessage: string,
): Promise<ReplyOf<typeof sentAnswer>> {
  const { device } = context
  const { messaging, settings } = context.services
  if (agendamento !== undefined) {
    const time = scheduleTime(agendamento, settings.timeZone)
    const item = await messaging.scheduler.schedule(device, await build(), time)
    return { message: 'Mensagem agendada.', id: item.id, agendamento: item.agendamento }
  }
  const id = await messaging.messenger.perform(device, await build(), { status: context.status })
  const reply: ReplyOf<typeof sentAnswer> = { message: sentMessage }
  if (id !== undefined) reply.id = id
  return reply
}

/**
 * The time of `agendamento`, or 401 `validation.required` when malformed, impossible, past or over a
 * year ahead. Past is judged with the clock allowance: a time up to 30 s before this host's clock
 * may be "now" by the client's clock or another instance's (it is sent at once), so an instance whose
 * clock runs ahead does not refuse what the others accept.
 */
function scheduleTime(value: string, timeZone: string, now = Date.now()): ScheduleTime {
  const time = parseScheduleTime(value, timeZone)
  if (!time || time.at < now - CLOCK_SKEW_ALLOWANCE_MS || time.at > now + MAX_SCHEDULE_AHEAD_MS) throw new GatewayError('invalid-input')
  return time
}
