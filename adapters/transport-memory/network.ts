import { randomBytes } from 'node:crypto'
import { TransportError } from 'zapgate'
import type { GroupInfo, GroupRef, MessageRef, OutgoingMessage, SentMessage } from 'zapgate'
import { parsePhone } from './addresses.ts'
import { deviceContent, invalid, phoneContent } from './content.ts'
import { FaultGate } from './faults.ts'
import { GroupRegistry } from './groups.ts'
import type { Group } from './groups.ts'
import { Post } from './post.ts'
import type { Traffic } from './post.ts'
import { checkTarget, destinationOf, receivedBy } from './routing.ts'
import { SessionRegistry, secretHash } from './sessions.ts'
import type { LinkTarget } from './sessions.ts'
import type {
  ConnectResult,
  DeviceCredentials,
  DeviceEndpoint,
  DeviceNetwork,
  Fault,
  InboxEntry,
  LinkChallengeSpec,
  MemoryNetworkOptions,
  NetworkStats,
  PhoneMessage,
  PhoneProfile,
} from './types.ts'

/**
 * The simulated messaging network, shared by any number of MemoryTransports (devices of two gateways
 * on one network reach each other). Simulated phones scan QR codes, send messages and read their
 * inboxes through the methods below; transports reach it through `devices` and `post`.
 */
export class MemoryNetwork implements DeviceNetwork {
  /** Linked devices and pending links (for transports). */
  readonly devices: SessionRegistry
  /** Message delivery, the message log and the phones' inboxes (for transports). */
  readonly post: Post
  /** Groups and their invite codes. */
  readonly groups: GroupRegistry
  /** Injected failures of device calls. */
  readonly faults = new FaultGate()
  private readonly inlineMediaBytes: number
  private readonly counts = { replaced: 0, sent: 0, received: 0 }

  constructor(options: MemoryNetworkOptions = {}) {
    for (const name of ['logLimit', 'inboxLimit', 'phoneLimit', 'offlineLimit', 'groupLimit'] as const) {
      const value = options[name]
      // NaN or a negative size would bound nothing: memory would grow without end.
      if (value !== undefined && !(Number.isSafeInteger(value) && value >= 1))
        throw new TypeError(`MemoryNetwork: ${name} must be a whole number >= 1, not ${value}`)
    }
    this.devices = new SessionRegistry(options.offlineLimit ?? 1_000)
    this.post = new Post(
      { logLimit: options.logLimit ?? 100_000, inboxLimit: options.inboxLimit ?? 1_000, phoneLimit: options.phoneLimit ?? 10_000 },
      this.devices,
    )
    this.groups = new GroupRegistry(options.groupLimit ?? 10_000)
    this.inlineMediaBytes = options.inlineMediaBytes ?? 256 * 1024
  }

  // --- Simulated phones ---

  /**
   * `phone` scans a QR or enters a pairing code (`target`: the QR string, the code, `{qr}`, `{code}`,
   * or `{deviceId}` for whatever that device shows). The network issues the device a secret; the
   * device is connected as `phone` before this resolves. Answers the device id.
   */
  async scan(target: LinkTarget, phone: string): Promise<string> {
    const number = requirePhone(phone)
    const { deviceId, endpoint } = this.devices.takePending(target, number)
    const previous = this.devices.get(deviceId)
    const secret = randomBytes(24).toString('base64url')
    const device = this.devices.register(deviceId, number, secretHash(secret))
    // Linked to another phone, the device drops its old link: whoever held it open must hear so.
    if (previous?.endpoint && previous.phone !== number) this.replace(deviceId, previous.endpoint, 'the device was linked to another phone')
    try {
      await endpoint.linked(deviceId, { phone: number, secret })
    } catch (err) {
      if (!device.endpoint && this.devices.get(deviceId) === device) this.devices.forget(deviceId)
      throw err
    }
    return deviceId
  }

  /** `from` sends a message to a phone or to a group it belongs to; answers the message id. */
  async sendFromPhone(from: string, to: string, message: PhoneMessage): Promise<string> {
    const sender = requirePhone(from)
    const destination = destinationOf(this.post, this.groups, sender, to)
    if (message?.type === 'reaction' || message?.type === 'delete' || message?.type === 'button') {
      checkTarget(this.post, this.groups, sender, destination, message.target, message.type, message.type === 'button' ? message : undefined)
    }
    const content = phoneContent(message)
    const { sent, deliveries } = this.post.send({ phone: sender }, destination, content, loggable(message.type))
    if (deliveries.length > 0) this.counts.received++
    await Promise.all(deliveries)
    if (message.type === 'delete') this.post.forget(message.target)
    return sent.id
  }

  /** What `phone` has received, oldest first. */
  inbox(phone: string): InboxEntry[] {
    return this.post.inbox(requirePhone(phone))
  }

  /** Empty `phone`'s inbox. */
  clearInbox(phone: string): void {
    this.post.clearInbox(requirePhone(phone))
  }

  /** Call `listener` with every message that crosses the network from now on; answers an unsubscribe function. */
  onMessage(listener: (traffic: Traffic) => void): () => void {
    return this.post.listen(listener)
  }

  /** Set how `phone` appears to others (LID, push name, hidden number); answers its LID, if any. */
  registerPhone(phone: string, profile: PhoneProfile): string | undefined {
    return this.post.setProfile(requirePhone(phone), profile)
  }

  /** `creator` creates a group with `members` (phones); answers its metadata, invite code included. */
  createGroup(creator: string, subject: string, members: string[] = [], options: { description?: string } = {}): GroupInfo {
    const group = this.groups.create(requirePhone(creator), subject, members.map(requirePhone), options.description)
    return this.describe(group, true)
  }

  /** A group's metadata as its admins see it, or undefined. */
  group(groupId: string): GroupInfo | undefined {
    const group = this.groups.get(groupId)
    return group && this.describe(group, true)
  }

  /** The group's invite link (`https://chat.whatsapp.com/<code>`), or undefined for an unknown group. */
  inviteLink(groupId: string): string | undefined {
    const group = this.groups.get(groupId)
    return group && this.groups.link(group)
  }

  /** Replace the group's invite code (old links become invalid); the new link, or undefined. */
  revokeInvite(groupId: string): string | undefined {
    const group = this.groups.get(groupId)
    if (!group) return undefined
    this.groups.revokeInvite(group)
    return this.groups.link(group)
  }

  /** The phone removes a linked device: its session closes as `logged-out`. False if it was not linked. */
  async unlink(deviceId: string): Promise<boolean> {
    const { endpoint, known } = this.devices.revoke(deviceId)
    this.faults.release(deviceId)
    if (endpoint) await endpoint.closed(deviceId, 'logged-out', 'unlinked from the phone')
    return known
  }

  /** Make the device's calls (or those of every device linked to a phone) hang, fail or be rate limited; null clears. */
  setFault(deviceOrPhone: string, fault: Fault | null): void {
    this.faults.set(parsePhone(deviceOrPhone) ?? deviceOrPhone, fault)
  }

  /** Resolve once every message under way has reached its devices (device sends are delivered just after they resolve). */
  settled(): Promise<void> {
    return this.devices.settled()
  }

  /** The phone a device is linked to, or undefined. */
  linkedPhone(deviceId: string): string | undefined {
    return this.devices.get(deviceId)?.phone
  }

  /** Counts since the network started: open connections, replaced ones, messages devices sent, phone messages devices received. */
  stats(): NetworkStats {
    return { connections: this.devices.online(), waiting: this.devices.waiting(), ...this.counts }
  }

  // --- Devices (the DeviceNetwork of MemoryTransport and of the simulator server) ---

  async beginLink(deviceId: string, endpoint: DeviceEndpoint, challenge: LinkChallengeSpec): Promise<void> {
    this.devices.beginLink(deviceId, endpoint, challenge)
  }

  async cancelLink(deviceId: string, endpoint: DeviceEndpoint): Promise<void> {
    this.devices.cancelLink(deviceId, endpoint)
  }

  async connect(deviceId: string, credentials: DeviceCredentials, endpoint: DeviceEndpoint): Promise<ConnectResult> {
    const attached = this.devices.attach(deviceId, credentials, endpoint)
    if (attached.state === 'logged-out') return attached
    if (attached.replaced) this.replace(deviceId, attached.replaced, 'the session was opened elsewhere')
    const lid = this.post.lidOf(credentials.phone)
    return lid ? { state: 'open', lid } : { state: 'open' }
  }

  async flush(deviceId: string, endpoint: DeviceEndpoint): Promise<void> {
    if (this.devices.get(deviceId)?.endpoint === endpoint) await this.devices.flush(deviceId)
  }

  async disconnect(deviceId: string, endpoint: DeviceEndpoint): Promise<void> {
    this.devices.cancelLink(deviceId, endpoint)
    this.devices.detach(deviceId, endpoint)
    this.faults.release(deviceId)
  }

  async logout(deviceId: string, credentials: DeviceCredentials | undefined, endpoint?: DeviceEndpoint): Promise<void> {
    this.devices.cancelLink(deviceId, endpoint)
    if (!this.devices.verify(deviceId, credentials)) return
    const { endpoint: holder } = this.devices.revoke(deviceId)
    this.faults.release(deviceId)
    if (holder && holder !== endpoint) await holder.closed(deviceId, 'logged-out', 'logged out').catch(() => undefined)
  }

  /** Send a device's message (through `endpoint`, when given: only the connection holding the device may); checks faults, the address and any target. Answers the id, the time and the chat as the recipient's replies name it. */
  async sendFromDevice(deviceId: string, to: string, message: OutgoingMessage, endpoint?: DeviceEndpoint): Promise<SentMessage> {
    const gated = this.gate(deviceId, endpoint)
    const phone = typeof gated === 'string' ? gated : await gated
    const destination = destinationOf(this.post, this.groups, phone, to)
    if (message?.kind === 'reaction' || message?.kind === 'delete') checkTarget(this.post, this.groups, phone, destination, message.target?.id, message.kind)
    const content = deviceContent(message, this.inlineMediaBytes)
    const { sent } = this.post.send({ phone, deviceId }, destination, content, loggable(message.kind))
    if (message.kind === 'delete') this.post.forget(message.target.id)
    this.counts.sent++
    return { ...sent, chat: 'group' in destination ? destination.group : (this.post.hiddenLid(destination.phone) ?? destination.phone) } // as replies name it
  }

  /** Send a read receipt for a message the device received. */
  async markRead(deviceId: string, target: MessageRef, endpoint?: DeviceEndpoint): Promise<void> {
    const phone = await this.gate(deviceId, endpoint)
    const message = typeof target?.id === 'string' ? this.post.message(target.id) : undefined
    const chat = typeof target?.chat === 'string' ? this.post.resolve(target.chat) : undefined
    const inChat = chat !== undefined && message !== undefined && ('group' in chat ? chat.group === message.to : chat.phone === message.from)
    if (!message || !inChat || !receivedBy(this.groups, message, phone)) throw new TransportError('not-found', 'no such received message in that chat')
    this.post.receipt(phone, message.from, message.id, message.to.endsWith('@g.us') ? message.to : undefined)
  }

  /** Group metadata for a device: by id (members only), or by invite. */
  async groupInfo(deviceId: string, ref: GroupRef, endpoint?: DeviceEndpoint): Promise<GroupInfo | undefined> {
    const phone = await this.gate(deviceId, endpoint)
    if (!ref || typeof ref !== 'object') invalid('a group is named by {id} or {invite}')
    if ('invite' in ref) {
      const group = this.groups.byInvite(ref.invite)
      return group && this.describe(group, true)
    }
    const group = this.groups.get(ref.id)
    if (!group?.members.has(phone)) return undefined
    return this.describe(group, group.members.get(phone) === true)
  }

  /** Create a group with the device as admin. */
  async groupCreate(deviceId: string, subject: string, participants: string[], endpoint?: DeviceEndpoint): Promise<GroupInfo> {
    const phone = await this.gate(deviceId, endpoint)
    if (!Array.isArray(participants)) invalid('participants must be a list of phone numbers')
    const phones = participants.map(p => parsePhone(p) ?? invalid(`not a phone number: ${String(p)}`))
    return this.describe(this.groups.create(phone, subject, phones), true)
  }

  /** Join a group by invite code or link; the group id, or undefined for an invalid invite. */
  async groupJoin(deviceId: string, invite: string, endpoint?: DeviceEndpoint): Promise<string | undefined> {
    const phone = await this.gate(deviceId, endpoint)
    return this.groups.join(phone, invite)?.id
  }

  // --- Internal helpers ---

  /**
   * Wait out any fault of the device; the phone it is online as (at once, without a promise, when no
   * fault is set: the case of nearly every call). Throws when the device is not online (through
   * `endpoint`, when given).
   */
  private gate(deviceId: string, endpoint?: DeviceEndpoint): string | Promise<string> {
    const phone = this.onlineAs(deviceId, endpoint)
    if (phone === undefined) throw new TransportError('not-connected', 'the device is not connected')
    if (!this.faults.any()) return phone
    return this.faults.check([deviceId, phone], () => this.onlineAs(deviceId, endpoint) !== undefined).then(() => phone)
  }

  /** The phone the device is online as (held by `endpoint`, when given), or undefined. */
  private onlineAs(deviceId: string, endpoint: DeviceEndpoint | undefined): string | undefined {
    const device = this.devices.get(deviceId)
    return device?.endpoint !== undefined && (endpoint === undefined || device.endpoint === endpoint) ? device.phone : undefined
  }

  /** Close `holder`'s connection of the device as `replaced` (not awaited: it learns on its own time, as with the real network). */
  private replace(deviceId: string, holder: DeviceEndpoint, reason: string): void {
    this.counts.replaced++
    this.faults.release(deviceId)
    holder.closed(deviceId, 'replaced', reason).catch(() => undefined)
  }

  private describe(group: Group, withInvite: boolean): GroupInfo {
    return this.groups.info(group, withInvite, phone => this.post.hiddenLid(phone))
  }
}

/** The digits of a phone number, or TransportError('invalid'). */
function requirePhone(phone: unknown): string {
  return parsePhone(phone) ?? invalid(`not a phone number: ${String(phone)}`)
}

/** Whether a kind of message can later be the target of a reaction, delete, read or tap. */
function loggable(kind: string): boolean {
  return kind !== 'reaction' && kind !== 'delete'
}
