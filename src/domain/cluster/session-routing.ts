import { GatewayError, isGatewayError } from '../../errors.ts'
import type { Account } from '../accounts.ts'
import type { Device, Devices } from '../devices.ts'
import type { SessionStatus } from '../../ports/transport.ts'
import type { DeviceLeases } from './device-leases.ts'

/** The settings of a device a link makes when none of that name exists. */
export interface NewDevice {
  /** The device's name (a generated one when absent). */
  name?: string
  appkey?: string
  webhookUrl?: string
}

/** How long after taking a device over its session counts as still opening. */
const HANDOVER_MS = 15_000
/** How long a request waits for such a session to open. */
const HANDOVER_WAIT_MS = 5_000

/**
 * Which instance works a request for a device: the one holding the device's session. Asked by the
 * HTTP edge before an operation runs, so that operations never see the cluster: this instance
 * holds the device's lease; or nobody alive holds it and this instance takes it (for a link, in
 * cluster mode only when it is the least loaded instance; otherwise only for a device linked before,
 * whose session is then opened here); or another instance holds it, and the answer names that
 * instance (the edge forwards the request there). A device nobody holds and that is not linked is
 * worked here without a lease: its session is closed anyway.
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
   * when nobody alive holds it). A request that was forwarded here (`forwarded`) is never sent on: a
   * holder elsewhere is then `holder-unavailable` (503, retry); a full instance is `instance-full`.
   */
  async holderOf(device: Device, forwarded: boolean, linking = false): Promise<string | undefined> {
    const { leases } = this
    if (leases.holds(device.id)) return undefined
    for (let attempt = 0; attempt < 3; attempt++) {
      const holder = await leases.holder(device.id)
      if (holder === leases.me) return undefined
      // The holder it was meant for let the device go.
      if (holder !== undefined) {
        if (forwarded) throw new GatewayError('holder-unavailable', { retryAfterSeconds: 5 })
        return holder
      }
      if (!linking && !device.linked) return undefined
      if (linking && this.clustered && !forwarded) {
        const target = await leases.leastLoaded()
        if (target !== leases.me) return target
      }
      // A fenced instance (its heartbeat late, the store away) takes nothing until it stands again.
      if (!leases.standing) throw new GatewayError('holder-unavailable', { retryAfterSeconds: 5 })
      // A link opens the session itself; a linked device taken here has its session opened now (the
      // balancer opens only devices nobody holds, and this one is held from now on).
      if (linking ? await leases.acquire(device.id) : await leases.open(device.id)) return undefined
      if (!leases.hasRoom) throw new GatewayError('instance-full', { retryAfterSeconds: 5 })
      // Another instance took it meanwhile: look again.
    }
    throw new GatewayError('holder-unavailable', { retryAfterSeconds: 5 })
  }

  /**
   * Where a link (operations 3 and 4) of the device `wanted.name` is worked: a string names the
   * instance to forward it to (the device's holder, or for a device still to be made in cluster mode
   * the least loaded instance, so that a device is made where it will live, before anything is
   * stored); else the device, found or made here, whose lease this instance now holds. Of concurrent
   * first links of one name through several instances, one makes the device and one takes its lease;
   * the others are sent there (the device is kept). A device this request made and cannot hold here
   * for another reason (`instance-full`) is deleted again: a refused request leaves nothing.
   */
  async link(account: Account, wanted: NewDevice, forwarded: boolean): Promise<{ device: Device; created: boolean; appkey?: string } | string> {
    const { devices, leases } = this
    if (this.clustered && !forwarded) {
      const existing = wanted.name === undefined ? undefined : await devices.find(account, wanted.name, ['name', 'appkey'])
      const target = existing ? undefined : await leases.leastLoaded()
      if (target !== undefined && target !== leases.me) return target
    }
    const ensured = await devices.ensure(account, { name: wanted.name ?? devices.generatedName(), appkey: wanted.appkey, webhookUrl: wanted.webhookUrl })
    let holder: string | undefined
    try {
      holder = await this.holderOf(ensured.device, forwarded, true)
    } catch (err) {
      if (ensured.created && !isGatewayError(err, 'holder-unavailable')) await devices.discard(ensured.device)
      throw err
    }
    return holder ?? ensured
  }

  /**
   * The open session of the device, for a send: `not-connected` when it is not open. When this
   * instance has just taken the device (from a gone or leaving instance, or back after a late
   * heartbeat) and its session is still opening, it waits for it (up to 5 s) rather than answer 409
   * for a moment of the handover; still not open then, `holder-unavailable` (503, retry). A linked
   * device this instance let go while the request was under way is `holder-unavailable` too.
   */
  async connected(device: Device): Promise<SessionStatus> {
    const status = await this.devices.status(device)
    if (status.connected) return status
    // Let go meanwhile (a late heartbeat closed this instance's sessions): the device is not
    // disconnected, it is changing hands; the client retries once an instance holds it again.
    if (device.linked && !this.leases.holds(device.id)) throw new GatewayError('holder-unavailable', { retryAfterSeconds: 5 })
    if (!device.linked || !this.leases.takenWithin(device.id, HANDOVER_MS)) throw new GatewayError('not-connected')
    const deadline = Date.now() + HANDOVER_WAIT_MS
    while (Date.now() < deadline) {
      await new Promise(resolve => setTimeout(resolve, 100))
      const now = await this.devices.status(device)
      if (now.connected) return now
    }
    throw new GatewayError('holder-unavailable', { retryAfterSeconds: 5 })
  }

  /**
   * An operation's error as the client should get it: a send that failed as `not-connected` because
   * this instance let the linked device go while it was queued or under way (a late heartbeat closed
   * its sessions) is `holder-unavailable` (503, retry; the network took nothing), not a 409 for a
   * device that is linked. Any other error as it is.
   */
  unlessLetGo(device: Device, err: unknown): unknown {
    const letGo = isGatewayError(err, 'not-connected') && device.linked && !this.leases.holds(device.id)
    return letGo ? new GatewayError('holder-unavailable', { retryAfterSeconds: 5, cause: err }) : err
  }
}
