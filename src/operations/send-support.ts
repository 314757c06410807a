import { GatewayError } from '../errors.ts'
import { CLOCK_SKEW_ALLOWANCE_MS } from '../domain/clock.ts'
import type { OperationContext, ReplyOf } from './operation.ts'
import type { Account } from '../domain/accounts.ts'
import type { Device, DeviceMatch } from '../domain/devices.ts'
import type { Action } from '../domain/messaging/actions.ts'
import { parseScheduleTime, type ScheduleTime } from '../domain/messaging/schedule-time.ts'
import type { sentAnswer } from './answers.ts'
import { connectedSession, onSessionHolder, unlessLetGo } from './device-session.ts'

/** Furthest a message can be scheduled ahead. */
const MAX_SCHEDULE_AHEAD_MS = 366 * 86_400_000

/** What the appkey field of a request may match: a device's appkey, or its name. */
const KEY_MATCH: DeviceMatch[] = ['appkey', 'name']

/** The keys of a request on the send, group and OTP paths. */
interface KeyFields {
  appkey: string
  authkey: string
}

/**
 * The caller's account and device: an unknown or expired authkey is 401 `validation.required`, an
 * appkey (or device name) that is not a device of that account is 404 `Nenhum dispositivo encontrado.`
 */
export async function requireDevice({ services }: OperationContext, { appkey, authkey }: KeyFields): Promise<{ account: Account; device: Device }> {
  const { accounts, devices } = services
  // From the cache without a promise when it can tell; the store decides everything else.
  const account = accounts.cachedAccount(authkey) ?? (await accounts.require(authkey))
  const device = devices.cachedDevice(account, appkey, KEY_MATCH) ?? (await devices.require(account, appkey, KEY_MATCH))
  return { account, device }
}

/** requireDevice, for an operation that uses the device's session: worked by the instance holding it. */
export async function requireSession(context: OperationContext, keys: KeyFields): Promise<{ account: Account; device: Device }> {
  const found = await requireDevice(context, keys)
  await onSessionHolder(context, found.device)
  return found
}

/**
 * The common path of operations 8 to 16: find the device; with `agendamento`, build the action and
 * store it for later (`{message, id, agendamento}`); without, check the device is connected (409),
 * build the action and do it now (`{message, id}` with the network's message id).
 */
export async function sendOrSchedule(
  context: OperationContext,
  fields: KeyFields & { agendamento?: string },
  build: () => Action | Promise<Action>,
  sentMessage: string,
): Promise<ReplyOf<typeof sentAnswer>> {
  const { accounts, devices, messaging, settings } = context.services
  const account = accounts.cachedAccount(fields.authkey) ?? (await accounts.require(fields.authkey))
  const device = devices.cachedDevice(account, fields.appkey, KEY_MATCH) ?? (await devices.require(account, fields.appkey, KEY_MATCH))
  if (fields.agendamento !== undefined) {
    const time = scheduleTime(fields.agendamento, settings.timeZone)
    const item = await messaging.scheduler.schedule(device, await build(), time)
    return { message: 'Mensagem agendada.', id: item.id, agendamento: item.agendamento }
  }
  // This instance holds the device's session (or the request goes to the one that does).
  if (!context.services.leases.holds(device.id)) await onSessionHolder(context, device)
  const status = await connectedSession(context, device)
  const action = build() // a text's action is built at once; media may have to be fetched
  const id = await messaging.messenger.perform(device, action instanceof Promise ? await action : action, { status }).catch(err => {
    throw unlessLetGo(context, device, err)
  })
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
