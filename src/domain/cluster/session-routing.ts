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

/**
 * Which instance works a request for a device, asked by the HTTP edge before an operation runs (the
 * operations never see the cluster): this one when it holds the device's lease, or when nobody alive
 * does and it takes it (a link only on the least loaded instance in cluster mode; otherwise only a
 * device linked before, whose session it then opens); else the holder, which the edge forwards to.
 * A device nobody holds and that is not linked is worked here without a lease (its session is closed).
 */
export class SessionRouting {
  constructor(
    private readonly devices: Devices,
    private readonly leases: DeviceLeases,
    private readonly clustered: boolean,
  ) {}

  /** Whether this instance holds the device's session now (no store read). */
  holdsHere(device: Device): boolean {
    return this.leases.holds(device.id)
  }

  /**
   * The instance to forward the request to, or undefined when this one works the device (taking it
   * when nobody alive holds it). A request forwarded here (`forwarded`) is never sent on: a holder
   * elsewhere is then `holder-unavailable` (503, retry); a full instance is `instance-full`.
   */
  async holderOf(device: Device, forwarded: boolean, linking = false): Promise<string | undefined> {
    const { leases } = this
    if (leases.holds(device.id)) return undefined
    for (let attempt = 0; attempt < 3; attempt++) {
      const holder = await leases.holder(device.id)
      if (holder === leases.me) return undefined
      if (holder !== undefined) {
        if (forwarded) throw moving() // the holder it was meant for let the device go
        return holder
      }
      if (!linking && !device.linked) return undefined
      if (linking && this.clustered && !forwarded) {
        const target = await leases.leastLoaded()
        if (target !== leases.me) return target
      }
      // A fenced instance (its heartbeat late, the store away) takes nothing until it stands again.
      if (!leases.standing) throw moving()
      // A link opens the session itself; a linked device taken here has its session opened now.
      if (linking ? await leases.acquire(device.id) : await leases.open(device.id)) return undefined
      if (!leases.hasRoom) throw new GatewayError('instance-full', { retryAfterSeconds: 5 })
      // Another instance took it meanwhile: look again.
    }
    throw moving()
  }

  /**
   * Where a link (operations 3 and 4) of `wanted.name` is worked: a string names the instance to
   * forward it to (the holder, or for a device still to be made in cluster mode the least loaded
   * instance, so that a device is made where it will live); else the device, found or made here,
   * whose lease this instance now holds. A device this request made and cannot hold here for another
   * reason than a moving holder (`instance-full`) is deleted again: a refused request leaves nothing.
   */
  async link(account: Account, wanted: NewDevice, forwarded: boolean): Promise<{ device: Device; created: boolean; appkey?: string } | string> {
    const { devices, leases } = this
    if (this.clustered && !forwarded) {
      const existing = wanted.name === undefined ? undefined : await devices.find(account, wanted.name, ['name', 'appkey'])
      const target = existing ? undefined : await leases.leastLoaded()
      if (target !== undefined && target !== leases.me) return target
    }
    const ensured = await devices.ensure(account, { name: wanted.name ?? devices.generatedName(), appkey: wanted.appkey, webhookUrl: wanted.webhookUrl })
    const holder = await this.holderOf(ensured.device, forwarded, true).catch(async err => {
      if (ensured.created && !isGatewayError(err, 'holder-unavailable')) await devices.discard(ensured.device)
      throw err
    })
    return holder ?? ensured
  }

  /**
   * The open session of the device, for a send: `not-connected` when closed. A device this instance
   * has just taken over (its session still opening) is waited for, up to 5 s, then
   * `holder-unavailable` (503, retry); so is a linked device this instance let go meanwhile.
   */
  async connected(device: Device): Promise<SessionStatus> {
    const status = await this.devices.status(device)
    if (status.connected) return status
    // Let go meanwhile (a late heartbeat closed this instance's sessions): changing hands, not disconnected.
    if (device.linked && !this.leases.holds(device.id)) throw moving()
    if (!device.linked || !this.leases.takenWithin(device.id, HANDOVER_MS)) throw new GatewayError('not-connected')
    const deadline = Date.now() + HANDOVER_WAIT_MS
    while (Date.now() < deadline) {
      await new Promise(resolve => setTimeout(resolve, 100))
      const now = await this.devices.status(device)
      if (now.connected) return now
    }
    throw moving()
  }

  /** An operation's error as the client gets it: `not-connected` for a linked device this instance let go while the send ran is `holder-unavailable` (503; the network took nothing). */
  unlessLetGo(device: Device, err: unknown): unknown {
    const letGo = isGatewayError(err, 'not-connected') && device.linked && !this.leases.holds(device.id)
    return letGo ? moving(err) : err
  }
}
