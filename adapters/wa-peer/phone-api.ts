import type { proto } from '@whiskeysockets/baileys'
import { changeMembers, createGroup, phoneSendsToGroup } from './groups.ts'
import { announceDevice, phoneReceipt, phoneRetryReceipt, phoneSends } from './messaging.ts'
import type { Account, DeviceReceipt, PeerCore, PeerGroup, PhoneSent } from './model.ts'
import { pairByQr } from './pairing.ts'
import { enterCode } from './pairing-code.ts'
import type { PhoneMessage } from './phone.ts'
import { tapReply } from './taps.ts'
import { contactVcard } from './vcard.ts'

/** A companion device as a test sees it. */
export interface WaDeviceInfo {
  /** `<pn>:<device>@s.whatsapp.net` */
  jid: string
  /** `<lid>:<device>@lid` */
  lid: string
  /** Logged in on an open connection. */
  connected: boolean
  /** Logins so far. */
  logins: number
  /** One-time pre-keys the device uploaded that are still unused. */
  preKeys: number
  /** Messages waiting for its next login. */
  waiting: number
}

/**
 * The phone of an account (device 0): it scans QR codes, reads what devices send it (decrypted with
 * its own signal identity), sends messages (encrypted for each linked device of the recipient),
 * sends read receipts, and unlinks devices.
 */
export class WaPhone {
  /** @internal */
  constructor(
    private readonly core: PeerCore,
    private readonly account: Account,
  ) {}

  /** The phone number (digits). */
  get pn(): string {
    return this.account.pn
  }

  /** `<pn>@s.whatsapp.net` */
  get jid(): string {
    return this.account.jid
  }

  /** `<lid>@lid` */
  get lid(): string {
    return this.account.lidJid
  }

  /** What the phone decrypted from devices, in order (the content as decoded protos). */
  get inbox(): readonly PhoneMessage[] {
    return this.account.inbox
  }

  /** Delivery and read receipts devices sent for this phone's messages, in order. */
  get receipts(): readonly DeviceReceipt[] {
    return this.account.receipts
  }

  /** Messages this phone sent. */
  get sent(): readonly PhoneSent[] {
    return this.account.sent
  }

  /** Change how the phone appears to others: its push name, and how its messages are addressed (see `WaPeer.phone`). */
  setProfile(profile: { pushName?: string; addressing?: 'pn' | 'lid' | 'hidden' }): void {
    if (profile.pushName !== undefined) this.account.pushName = profile.pushName
    if (profile.addressing) this.account.addressing = profile.addressing
  }

  /** The devices linked to this account. */
  devices(): WaDeviceInfo[] {
    return [...this.account.devices.values()].map(d => ({
      jid: d.jid,
      lid: d.lid,
      connected: !!d.channel && !d.channel.closed,
      logins: d.logins,
      preKeys: d.preKeys.size,
      waiting: d.waiting.length,
    }))
  }

  /**
   * Scan a QR (Baileys' string, or the `https://wa.me/settings/linked_devices#...` form): pairs the
   * connection showing it as a new device of this account, then restarts its stream (515).
   */
  async scan(qr: string): Promise<WaDeviceInfo> {
    const device = await pairByQr(this.core, this.account, qr)
    return { jid: device.jid, lid: device.lid, connected: false, logins: 0, preKeys: 0, waiting: 0 }
  }

  /** Enter a pairing code that a client asked for this number (`requestPairingCode`): links it as a new device of this account. */
  async enterCode(code: string): Promise<WaDeviceInfo> {
    const device = await enterCode(this.core, this.account, code)
    return { jid: device.jid, lid: device.lid, connected: false, logins: 0, preKeys: 0, waiting: 0 }
  }

  /** Send any message content to the account `to` (a phone of this peer); returns what was sent (with its id). */
  send(to: WaPhone | string, message: proto.IMessage): PhoneSent {
    return phoneSends(this.core, this.account, this.target(to), message)
  }

  /** Send an image (encrypted and uploaded to the peer's media host, which must run: `media: true`). */
  async sendImage(to: WaPhone | string, data: Buffer, options: { caption?: string; mimetype?: string } = {}): Promise<PhoneSent> {
    return this.send(to, await this.mediaContent('image', data, options))
  }

  /**
   * A media message of `type` carrying `data`, encrypted and uploaded to the peer's media host (which
   * must run: `media: true`) as a phone does; send it with `send` or `sendToGroup`.
   */
  async mediaContent(type: PhoneMediaKind, data: Buffer, options: PhoneMediaOptions = {}): Promise<proto.IMessage> {
    const media = this.core.media
    if (!media) throw new Error('the peer runs no media host (start it with media: true)')
    const uploaded = await media.upload(data, type)
    const fields = {
      ...uploaded,
      mimetype: options.mimetype ?? DEFAULT_MIMETYPES[type],
      ...(options.caption && type !== 'audio' ? { caption: options.caption } : {}),
      ...(options.fileName && type === 'document' ? { fileName: options.fileName } : {}),
      ...(options.voiceNote && type === 'audio' ? { ptt: true } : {}),
    }
    return { [`${type}Message`]: fields }
  }

  /** Send a text. */
  sendText(to: WaPhone | string, text: string): PhoneSent {
    return this.send(to, { conversation: text })
  }

  /** React to a message (`fromMe`: the message was sent by `to`'s side, i.e. the gateway; default true). */
  react(to: WaPhone | string, messageId: string, emoji: string, fromMe = true): PhoneSent {
    const target = this.target(to)
    return this.send(to, { reactionMessage: { key: { remoteJid: target.jid, fromMe: !fromMe, id: messageId }, text: emoji, senderTimestampMs: Date.now() } })
  }

  /** Send a location. */
  sendLocation(to: WaPhone | string, latitude: number, longitude: number, name?: string): PhoneSent {
    return this.send(to, { locationMessage: { degreesLatitude: latitude, degreesLongitude: longitude, ...(name ? { name } : {}) } })
  }

  /** Send a contact card. */
  sendContact(to: WaPhone | string, displayName: string, phone: string): PhoneSent {
    return this.send(to, { contactMessage: { displayName, vcard: contactVcard(displayName, phone) } })
  }

  /**
   * Tap button `buttonId` of message `messageId`, one `to`'s side sent this phone, as a phone answers
   * it (see `tapReply`): a native-flow quick reply (operations 15 and 16) is an
   * `interactiveResponseMessage`, a legacy `buttonsMessage`'s button a `buttonsResponseMessage`; the
   * display text is the button's. A tap on buttons sent to a group goes to the group. Throws for a message this phone did not get from `to`, one without
   * buttons, and a button it does not show as a quick reply.
   */
  tapButton(to: WaPhone | string, messageId: string, buttonId: string): PhoneSent {
    const target = this.target(to)
    const tapped = this.account.inbox.find(m => m.id === messageId && m.from === target.pn && !m.sentByOwnDevice)
    if (!tapped) throw new Error(`${this.pn} has no message ${messageId} from ${target.pn}`)
    const reply = tapReply(this.core.lib, tapped, buttonId)
    return tapped.to.endsWith('@g.us') ? this.sendToGroup(tapped.to, reply) : this.send(to, reply)
  }

  /** Delete for everyone a message this phone sent to `to`. */
  revoke(to: WaPhone | string, messageId: string): PhoneSent {
    const target = this.target(to)
    const { proto } = this.core.lib
    return this.send(to, { protocolMessage: { type: proto.Message.ProtocolMessage.Type.REVOKE, key: { remoteJid: target.jid, fromMe: true, id: messageId } } })
  }

  /** Mark a message of the inbox as read (a read receipt to the devices of its sender). */
  read(messageId: string): void {
    const message = this.account.inbox.find(m => m.id === messageId)
    if (!message) throw new Error(`${this.pn} has no message ${messageId}`)
    phoneReceipt(this.core, this.account, message, 'read')
  }

  /**
   * Ask the devices that sent a message of the inbox to send it again (a retry receipt, as a phone that could not decrypt it); `count`: which attempt.
   * Several ids (messages of one sender): one receipt naming them all, the first as its id, the others in its `<list>`.
   */
  askResend(messageId: string | string[], count = 1): void {
    const [first, ...more] = [messageId].flat().map(id => {
      const message = this.account.inbox.find(m => m.id === id && !m.sentByOwnDevice)
      if (!message) throw new Error(`${this.pn} has no message ${id}`)
      return message
    })
    if (more.some(m => m.from !== first.from)) throw new Error('one retry receipt names messages of one sender only')
    phoneRetryReceipt(this.core, this.account, first, count, more)
  }

  /** Unlink one device (by JID) or every device of the account: each connected one gets stream error 401 and its next login fails. */
  unlink(deviceJid?: string): void {
    for (const device of [...this.account.devices.values()]) {
      if (deviceJid && device.jid !== deviceJid && device.lid !== deviceJid) continue
      this.account.devices.delete(device.device)
      announceDevice(this.core, device, 'remove')
      device.channel?.streamError({ code: '401', child: { tag: 'conflict', attrs: { type: 'device_removed' } } })
    }
  }

  /** Send any message content to a group this phone is a member of (one skmsg under its sender key; the key goes pairwise to each member device the first time). */
  sendToGroup(groupJid: string, message: proto.IMessage): PhoneSent {
    return phoneSendsToGroup(this.core, this.account, this.group(groupJid), message)
  }

  /** Send a text to a group. */
  sendGroupText(groupJid: string, text: string): PhoneSent {
    return this.sendToGroup(groupJid, { conversation: text })
  }

  /** Create a group with this phone as its admin and `members` in it (their devices get the add notification); its JID. */
  createGroup(subject: string, ...members: (WaPhone | string)[]): string {
    return createGroup(
      this.core,
      this.account,
      subject,
      members.map(p => this.target(p)),
    ).jid
  }

  /** As an admin of the group, add phones (every member device gets a `w:gp2` add notification). */
  addToGroup(groupJid: string, ...phones: (WaPhone | string)[]): void {
    this.changeGroup(groupJid, 'add', phones)
  }

  /** As an admin of the group, remove members (every member device, and theirs, gets a `w:gp2` remove notification). */
  removeFromGroup(groupJid: string, ...phones: (WaPhone | string)[]): void {
    this.changeGroup(groupJid, 'remove', phones)
  }

  private changeGroup(groupJid: string, change: 'add' | 'remove', phones: (WaPhone | string)[]): void {
    const group = this.group(groupJid)
    if (!group.members.get(this.pn)?.admin) throw new Error(`${this.pn} is no admin of ${groupJid}`)
    changeMembers(
      this.core,
      group,
      this.account,
      change,
      phones.map(p => this.target(p)),
    )
  }

  private group(groupJid: string): PeerGroup {
    const group = this.core.groups.get(groupJid)
    if (!group || !group.members.has(this.pn)) throw new Error(`${this.pn} is no member of ${groupJid}`)
    return group
  }

  private target(to: WaPhone | string): Account {
    const user = typeof to === 'string' ? to.replace(/\D/g, '') : to.pn
    const account = this.core.accountByUser(user)
    if (!account) throw new Error(`${user} is not a phone of this peer`)
    return account
  }
}

/** The kinds of media a phone sends. */
export type PhoneMediaKind = 'image' | 'video' | 'audio' | 'document'

/** What a phone's media message says besides its bytes. */
export interface PhoneMediaOptions {
  caption?: string
  mimetype?: string
  /** Documents only. */
  fileName?: string
  /** Audio only: a voice note (`ptt`). */
  voiceNote?: boolean
}

const DEFAULT_MIMETYPES: Record<PhoneMediaKind, string> = {
  image: 'image/png',
  video: 'video/mp4',
  audio: 'audio/ogg; codecs=opus',
  document: 'application/octet-stream',
}
