import { GatewayError, isGatewayError } from '../../errors.ts'
import type { Account } from '../accounts.ts'
import type { Device, Devices } from '../devices.ts'
import type { SessionStatus } from '../../ports/transport.ts'
import type { DeviceLeases } from './device-leases.ts'

/** The settings of a device a link makes when none of that name exists (`name`: a generated one when absent). */
export interface NewDevice {
  name?: string
  appkey?: string
  webhookUrl?: string
}

/** How long after taking a device over its session counts as still opening, and how long a request waits for it. */
const HANDOVER_MS = 15_000
const HANDOVER_WAIT_MS = 5_000

/** 503 with Retry-After (`holder-unavailable`): the device is changing hands or its holder cannot be reached, the client retries. */
export const moving = (cause?: unknown) => new GatewayError('holder-unavailable', { retryAfterSeconds: 5, cause })

/** Which instance works a request for a device (see sessionRouting). */
export type SessionRouting = ReturnType<typeof sessionRouting>

/** Which instance works a request for a device: this one when it holds or takes the lease, else the holder to forward to (docs/scaling.md, "Forwarding"). */
export function sessionRouting(devices: Devices, leases: DeviceLeases, clustered: boolean) {
  /**
   * The instance to forward to, or undefined when this one works the device; a request `forwarded` here is never sent on (`holder-unavailable`).
   * A deletion (`deleting`) of an unlinked device nobody holds takes its lease too, in a cluster: a link starting on another instance then
   * forwards to this one (its deletion and the link run one after the other), never left pending where this one's logout cannot cancel it.
   */
  const holderOf = async (device: Device, forwarded: boolean, linking = false, deleting = false): Promise<string | undefined> => {
    if (leases.holds(device.id)) return undefined
    for (let attempt = 0; attempt < 3; attempt++) {
      const holder = await leases.holder(device.id)
      if (holder === leases.me) return undefined
      if (holder !== undefined) {
        if (forwarded) throw moving() // the holder it was meant for let the device go
        return holder
      }
      if (!linking && !(deleting && clustered) && !device.linked) return undefined
      if (linking && clustered && !forwarded) {
        const target = await leases.leastLoaded()
        if (target !== leases.me) return target
      }
      // A fenced instance (its heartbeat late, the store away) takes nothing; a device linked before is opened, never linked anew.
      if (!leases.standing) throw moving()
      if (!device.linked ? await leases.acquire(device.id, { evenWhenFull: !linking }) : await leases.open(device.id)) return undefined
      if (!leases.hasRoom) throw new GatewayError('instance-full')
    }
    throw moving()
  }
  /** A session not open for a send: a device held elsewhere is moving, one taken over here moments ago is waited for. */
  async function notOpen(device: Device): Promise<SessionStatus> {
    if (device.linked && !leases.holds(device.id)) throw moving()
    if (!device.linked || !leases.takenWithin(device.id, HANDOVER_MS)) throw new GatewayError('not-connected')
    const deadline = Date.now() + HANDOVER_WAIT_MS
    while (Date.now() < deadline) {
      await new Promise(resolve => setTimeout(resolve, 100))
      const now = await devices.status(device)
      if (now.connected) return now
    }
    throw moving()
  }
  return {
    holderOf,
    /** Whether this instance holds the device's session now (no store read). */
    holdsHere: (device: Device): boolean => leases.holds(device.id),
    /** Where a link of `wanted.name` is worked: the instance to forward to, else the device found or made (and held) here; one made here and refused is deleted. */
    async link(account: Account, wanted: NewDevice, forwarded: boolean): Promise<{ device: Device; created: boolean; appkey?: string } | string> {
      if (clustered && !forwarded) {
        const existing = wanted.name === undefined ? undefined : await devices.find(account, wanted.name, ['name', 'appkey'])
        const target = existing ? undefined : await leases.leastLoaded()
        if (target !== undefined && target !== leases.me) return target
      }
      const ensured = await devices.ensure(account, { name: wanted.name ?? devices.generatedName(), appkey: wanted.appkey, webhookUrl: wanted.webhookUrl })
      const holder = await holderOf(ensured.device, forwarded, true).catch(async err => {
        if (ensured.created && !isGatewayError(err, 'holder-unavailable')) await devices.discard(ensured.device)
        throw err
      })
      return holder ?? ensured
    },
    /** The device's open session, for a send (open and known at once: no promise): `not-connected` when closed; one just taken over here is waited for, up to 5 s, then `holder-unavailable`. */
    connected(device: Device): SessionStatus | Promise<SessionStatus> {
      const status = devices.status(device)
      if (status instanceof Promise) return status.then(known => (known.connected ? known : notOpen(device)))
      return status.connected ? status : notOpen(device)
    },
    /** Makes an operation's `not-connected` `holder-unavailable` (503; the network took nothing) when this instance let the device go while it ran (held at another epoch since, or not at all). */
    letGoGuard(device: Device): (err: unknown) => unknown {
      const epoch = leases.epochOf(device.id)
      return err => (isGatewayError(err, 'not-connected') && device.linked && (leases.epochOf(device.id) ?? -1) !== epoch ? moving(err) : err)
    },
  }
}
