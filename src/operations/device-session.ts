import { GatewayError } from '../errors.ts'
import { HeldElsewhere } from '../domain/cluster/device-leases.ts'
import type { Account } from '../domain/accounts.ts'
import type { Device } from '../domain/devices.ts'
import type { SessionStatus } from '../ports/transport.ts'
import type { OperationContext } from './operation.ts'

/**
 * Make sure this instance works the device's session before an operation uses it: it holds the
 * device's lease; or nobody alive holds it and this instance takes it (for a link, `linking`, in
 * cluster mode only when it is the least loaded instance; otherwise only for a device linked before,
 * whose session is waiting for a taker); or another instance holds it, and the request goes there
 * (HeldElsewhere: the HTTP edge forwards it). A device nobody holds and that is not linked is
 * worked here without a lease: its session is closed anyway.
 */
export async function onSessionHolder(context: OperationContext, device: Device, linking = false): Promise<void> {
  const { leases, clustered } = context.services
  if (leases.holds(device.id)) return
  for (let attempt = 0; attempt < 3; attempt++) {
    const holder = await leases.holder(device.id)
    if (holder === leases.me) return
    // A forwarded request is never forwarded again: the holder it was meant for let the device go.
    if (holder !== undefined) throw context.forwardedBy ? new GatewayError('holder-unavailable', { retryAfterSeconds: 5 }) : new HeldElsewhere(device.id, holder)
    if (!linking && !device.linked) return
    if (linking && clustered && !context.forwardedBy) {
      const target = leases.leastLoaded()
      if (target !== leases.me) throw new HeldElsewhere(device.id, target)
    }
    // A fenced instance (its heartbeat late, the store away) takes nothing until it stands again.
    if (!leases.standing) throw new GatewayError('holder-unavailable', { retryAfterSeconds: 5 })
    // A link opens the session itself; a linked device taken here has its session opened now (the
    // balancer opens only devices nobody holds, and this one is held from now on).
    if (linking ? await leases.acquire(device.id) : await leases.open(device.id)) return
    if (!leases.hasRoom) throw new GatewayError('instance-full', { retryAfterSeconds: 5 })
    // Another instance took it meanwhile: look again.
  }
  throw new GatewayError('holder-unavailable', { retryAfterSeconds: 5 })
}

/**
 * Before a link (operations 3 and 4) makes or reuses the device `name`: the request goes to the
 * instance that should link it (HeldElsewhere), the one holding the device, or, for a device still to
 * be made in cluster mode, the least loaded instance, so that a new device is made where it will live.
 */
export async function routeLink(context: OperationContext, account: Account, name: string): Promise<void> {
  const { devices, leases, clustered } = context.services
  const existing = await devices.find(account, name, ['name', 'appkey'])
  if (existing) return onSessionHolder(context, existing, true)
  if (!clustered || context.forwardedBy) return
  const target = leases.leastLoaded()
  if (target !== leases.me) throw new HeldElsewhere(name, target)
}

/** How long after taking a device over its session counts as still opening. */
const HANDOVER_MS = 15_000
/** How long a request waits for such a session to open. */
const HANDOVER_WAIT_MS = 5_000

/**
 * The open session of the device, for a send: `not-connected` when it is not open. When this instance
 * has just taken the device (from a gone or leaving instance, or back after a late heartbeat) and its
 * session is still opening, it waits for it (up to 5 s) rather than answer 409 for a moment of the
 * handover; still not open then, `holder-unavailable` (503, retry). A linked device this instance let
 * go while the request was under way is `holder-unavailable` too.
 */
export async function connectedSession(context: OperationContext, device: Device): Promise<SessionStatus> {
  const { leases, messaging } = context.services
  const status = await messaging.messenger.status(device)
  if (status.connected) return status
  // Let go meanwhile (a late heartbeat closed this instance's sessions): the device is not disconnected,
  // it is changing hands; the client retries once an instance holds it again.
  if (device.linked && !leases.holds(device.id)) throw new GatewayError('holder-unavailable', { retryAfterSeconds: 5 })
  if (!device.linked || !leases.takenWithin(device.id, HANDOVER_MS)) throw new GatewayError('not-connected')
  const deadline = Date.now() + HANDOVER_WAIT_MS
  while (Date.now() < deadline) {
    await new Promise(resolve => setTimeout(resolve, 100))
    const now = await messaging.messenger.status(device)
    if (now.connected) return now
  }
  throw new GatewayError('holder-unavailable', { retryAfterSeconds: 5 })
}

/**
 * A send that failed as `not-connected` because this instance let the linked device go while it was
 * queued or under way (a late heartbeat closed its sessions): `holder-unavailable` (503, retry; the
 * network took nothing), not a 409 for a device that is linked. Any other error as it is.
 */
export function unlessLetGo(context: OperationContext, device: Device, err: unknown): unknown {
  const letGo = err instanceof GatewayError && err.code === 'not-connected' && device.linked && !context.services.leases.holds(device.id)
  return letGo ? new GatewayError('holder-unavailable', { retryAfterSeconds: 5, cause: err }) : err
}
