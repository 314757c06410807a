import { createHash, timingSafeEqual } from 'node:crypto'
import { TransportError } from 'zapgate'
import type { IncomingMessage } from 'zapgate'
import { putBounded } from 'zapgate/adapter-kit'
import { parsePhone, pushBounded } from './addresses.ts'
import type { DeviceCredentials, DeviceEndpoint } from './types.ts'

/** What completes a pending link: a QR string, a pairing code, a device id, or any of them as text. */
export type LinkTarget = string | { qr: string } | { code: string } | { deviceId: string }

/** A device linked to a phone; `endpoint` is set while a transport holds its session open. */
interface LinkedDevice {
  phone: string
  /** SHA-256 of the secret issued when the device was linked (absent for a device first seen without one). */
  secretHash?: Buffer
  endpoint?: DeviceEndpoint
  /** Messages that arrived while the device was offline, delivered when it comes back. */
  offline: IncomingMessage[]
  /** Messages its transport failed to take while online (not acked): handed again, first, when it next connects. */
  untaken: IncomingMessage[]
}

/** A link waiting for a phone: the current QR, or a pairing code issued for one phone. */
interface PendingLink {
  endpoint: DeviceEndpoint
  qr?: string
  code?: string
  phone?: string
}

/**
 * Which devices are linked to which phones, which are online (and through which transport), and
 * which links are pending. Every map is bounded: one entry per device, oldest dropped past `limit`.
 */
export class SessionRegistry {
  private readonly devices = new Map<string, LinkedDevice>()
  private readonly byPhone = new Map<string, Set<string>>()
  private readonly pending = new Map<string, PendingLink>()
  private readonly challenges = new Map<string, string>()
  private readonly revoked = new Map<string, true>()
  /** The last delivery queued per device (removed once the device's deliveries are done). */
  private readonly tails = new Map<string, Promise<void>>()

  constructor(
    private readonly offlineLimit: number,
    private readonly limit = 100_000,
  ) {}

  /** Wait for a phone to complete `challenge` for `deviceId` (replacing any earlier challenge). */
  beginLink(deviceId: string, endpoint: DeviceEndpoint, challenge: { qr: string } | { code: string; phone: string }): void {
    this.cancelLink(deviceId)
    const link: PendingLink = { endpoint, ...challenge }
    putBounded(this.pending, deviceId, link, this.limit, (_, old) => this.dropChallenges(old))
    if ('qr' in challenge) this.challenges.set(qrKey(challenge.qr), deviceId)
    else this.challenges.set(codeKey(challenge.code, challenge.phone), deviceId)
  }

  /** Forget the device's pending link, if any (only when `endpoint` made it, when given). */
  cancelLink(deviceId: string, endpoint?: DeviceEndpoint): void {
    const link = this.pending.get(deviceId)
    if (!link || (endpoint !== undefined && link.endpoint !== endpoint)) return
    this.pending.delete(deviceId)
    this.dropChallenges(link)
  }

  /**
   * Take the pending link that `phone` completes: by QR (any phone), by pairing code (only the phone
   * it was issued for) or by device id. Throws not-found when nothing is pending, invalid when a
   * pairing code belongs to another phone.
   */
  takePending(target: LinkTarget, phone: string): { deviceId: string; endpoint: DeviceEndpoint } {
    let deviceId: string | undefined
    if (typeof target === 'string') {
      deviceId = this.challenges.get(qrKey(target)) ?? this.challenges.get(codeKey(target, phone)) ?? (this.pending.has(target) ? target : undefined)
    } else if ('qr' in target) deviceId = this.challenges.get(qrKey(target.qr))
    else if ('code' in target) deviceId = this.challenges.get(codeKey(target.code, phone))
    else deviceId = target.deviceId
    const link = deviceId === undefined ? undefined : this.pending.get(deviceId)
    if (deviceId === undefined || !link) throw new TransportError('not-found', 'no pending link matches (QR expired, or code issued for another phone)')
    if (link.code !== undefined && link.phone !== phone) {
      throw new TransportError('invalid', 'the pairing code was issued for another phone')
    }
    this.cancelLink(deviceId)
    return { deviceId, endpoint: link.endpoint }
  }

  /**
   * Record that `phone` linked the device with a secret hashing to `secretHash` (a link to another
   * phone than before drops what was queued for the old one).
   */
  register(deviceId: string, phone: string, secretHash: Buffer | undefined): LinkedDevice {
    this.revoked.delete(deviceId)
    const current = this.devices.get(deviceId)
    if (current && current.phone !== phone) this.forget(deviceId)
    const device: LinkedDevice = current && current.phone === phone ? current : { phone, offline: [], untaken: [] }
    device.secretHash = secretHash
    putBounded(this.devices, deviceId, device, this.limit, (id, old) => this.unindex(id, old.phone))
    const set = this.byPhone.get(phone) ?? new Set()
    this.byPhone.set(phone, set.add(deviceId))
    return device
  }

  /**
   * Bring the device online through `endpoint` when its credentials are right. Answers `logged-out`
   * when the phone unlinked the device while it was away or the credentials are wrong; `replaced` is
   * the endpoint that held it until now. A device the network does not know (it was restarted) is
   * registered with the credentials shown.
   */
  attach(
    deviceId: string,
    credentials: DeviceCredentials,
    endpoint: DeviceEndpoint,
  ): { state: 'open'; replaced?: DeviceEndpoint } | { state: 'logged-out'; reason: string } {
    if (this.revoked.has(deviceId)) return { state: 'logged-out', reason: 'unlinked from the phone' }
    const known = this.devices.get(deviceId)
    if (known && !accepts(known, credentials)) return { state: 'logged-out', reason: 'the network refused the device credentials' }
    const device = known ?? this.register(deviceId, credentials.phone, credentials.secret === undefined ? undefined : secretHash(credentials.secret))
    const replaced = device.endpoint && device.endpoint !== endpoint ? device.endpoint : undefined
    device.endpoint = endpoint
    return { state: 'open', replaced }
  }

  /** Whether `credentials` are the device's (any, for a device the network does not know). */
  verify(deviceId: string, credentials: DeviceCredentials | undefined): boolean {
    const device = this.devices.get(deviceId)
    return device === undefined || (credentials !== undefined && accepts(device, credentials))
  }

  /** Number of devices online (held open by an endpoint). */
  online(): number {
    let count = 0
    for (const device of this.devices.values()) if (device.endpoint) count++
    return count
  }

  /** Number of messages queued for devices while they are offline. */
  waiting(): number {
    let count = 0
    for (const device of this.devices.values()) count += device.offline.length + device.untaken.length
    return count
  }

  /** Take the device offline (its link stays) when `endpoint` holds it. */
  detach(deviceId: string, endpoint: DeviceEndpoint): boolean {
    const device = this.devices.get(deviceId)
    if (!device || device.endpoint !== endpoint) return false
    device.endpoint = undefined
    return true
  }

  /** Unlink the device and drop what was queued for it. */
  forget(deviceId: string): void {
    this.cancelLink(deviceId)
    this.revoked.delete(deviceId)
    const device = this.devices.get(deviceId)
    if (!device) return
    this.devices.delete(deviceId)
    this.unindex(deviceId, device.phone)
  }

  /** Unlink the device (its credentials stop working until a new link); the endpoint holding it, if it was online. */
  revoke(deviceId: string): { endpoint?: DeviceEndpoint; known: boolean } {
    const device = this.devices.get(deviceId)
    this.forget(deviceId)
    if (device) putBounded(this.revoked, deviceId, true, this.limit)
    return { endpoint: device?.endpoint, known: device !== undefined }
  }

  /** The linked device, or undefined. */
  get(deviceId: string): LinkedDevice | undefined {
    return this.devices.get(deviceId)
  }

  /** The ids of devices linked to `phone`. */
  devicesOf(phone: string): string[] {
    return [...(this.byPhone.get(phone) ?? [])]
  }

  /** Whether `phone` has a linked device other than `except`. */
  hasDevicesBesides(phone: string, except: string | undefined): boolean {
    const devices = this.byPhone.get(phone)
    return devices !== undefined && (devices.size > 1 || (devices.size === 1 && !devices.has(except!)))
  }

  /**
   * Hand a message to the device, or queue it (bounded) until it comes back online. Deliveries to one
   * device happen one at a time, in order; the promise settles once this one is done. While what was
   * queued for a device that came back is not flushed yet, new messages queue behind it. A message
   * the device fails to take is kept (not acked) and handed again when it next connects.
   */
  deliver(deviceId: string, message: IncomingMessage): Promise<void> {
    if (!this.devices.has(deviceId)) return Promise.resolve()
    return this.enqueue(deviceId, async () => {
      const device = this.devices.get(deviceId)
      if (device?.endpoint && device.offline.length === 0) await this.handOver(deviceId, device, message)
      else if (device) pushBounded(device.offline, message, this.offlineLimit)
    })
  }

  /**
   * Messages a connection of the device took but never acked (it ended first), oldest first: put
   * them back first in line, ahead of later ones, for the device's next flush (bounded as the queue).
   */
  redeliver(deviceId: string, messages: IncomingMessage[]): void {
    const device = this.devices.get(deviceId)
    if (!device || messages.length === 0) return
    device.offline.unshift(...messages)
    if (device.offline.length > this.offlineLimit) device.offline.splice(0, device.offline.length - this.offlineLimit)
  }

  /** Deliver (in order, after deliveries already under way) what the device did not take and what was queued while it was offline. */
  flush(deviceId: string): Promise<void> {
    return this.enqueue(deviceId, async () => {
      const device = this.devices.get(deviceId)
      if (device?.endpoint) this.redeliver(deviceId, device.untaken.splice(0))
      while (device?.endpoint && device.offline.length > 0) await this.handOver(deviceId, device, device.offline.shift()!)
    })
  }

  /** Resolve once every delivery under way (including ones they cause) is done. */
  async settled(): Promise<void> {
    while (this.tails.size > 0) await Promise.all(this.tails.values())
  }

  // --- Internal helpers ---

  /** Run `task` after the device's earlier deliveries; a failed task does not stop later ones. */
  private enqueue(deviceId: string, task: () => Promise<void>): Promise<void> {
    const tail = (this.tails.get(deviceId) ?? Promise.resolve()).then(task).catch(() => undefined)
    this.tails.set(deviceId, tail)
    void tail.then(() => {
      if (this.tails.get(deviceId) === tail) this.tails.delete(deviceId)
    })
    return tail
  }

  /** Hand the message to the device's endpoint; one it fails to take is kept for its next connection. */
  private async handOver(deviceId: string, device: LinkedDevice, message: IncomingMessage): Promise<void> {
    await device.endpoint!.receive(deviceId, message).catch(() => pushBounded(device.untaken, message, this.offlineLimit))
  }

  private dropChallenges(link: PendingLink): void {
    if (link.qr !== undefined) this.challenges.delete(qrKey(link.qr))
    if (link.code !== undefined && link.phone !== undefined) this.challenges.delete(codeKey(link.code, link.phone))
  }

  private unindex(deviceId: string, phone: string): void {
    const set = this.byPhone.get(phone)
    set?.delete(deviceId)
    if (set?.size === 0) this.byPhone.delete(phone)
  }
}

// --- Internal helpers ---

function qrKey(qr: string): string {
  return `qr:${qr}`
}

function codeKey(code: string, phone: string): string {
  return `code:${parsePhone(phone) ?? phone}:${code.replace(/[\s-]/g, '').toUpperCase()}`
}

/** SHA-256 of a device secret: the network keeps only this. */
export function secretHash(secret: string): Buffer {
  return createHash('sha256').update(secret).digest()
}

/** The phone matches and the secret hashes to the one issued (constant-time); any secret for a device linked without one. */
function accepts(device: LinkedDevice, credentials: DeviceCredentials): boolean {
  if (credentials?.phone !== device.phone) return false
  if (device.secretHash === undefined) return true
  return typeof credentials.secret === 'string' && timingSafeEqual(secretHash(credentials.secret), device.secretHash)
}
