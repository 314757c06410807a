import type { proto } from '@whiskeysockets/baileys'
import { TransportError, type GroupInfo, type LinkChallenge } from 'zapgate'
import type { InboxEntry, LinkTarget, NetworkStats, PhoneMessage, PhoneNetwork, PhoneProfile } from 'zapgate/adapters/transport-memory'
import { inboxEntries } from './inbox.ts'
import { contactVcard } from './vcard.ts'
import type { PeerStats } from './model.ts'
import type { WaPeer } from './peer.ts'
import type { WaPhone } from './phone-api.ts'

/** Options of PeerPhoneNetwork. */
export interface PeerPhoneNetworkOptions {
  /**
   * The challenge (QR or pairing code) the gateway's device `deviceId` shows now, for scans by
   * appkey; absent on a peer server (apart from the gateway), where scans go by `{qr}` or `{code}`.
   */
  challengeOf?(deviceId: string): LinkChallenge | undefined
  /** The gateway's device that shows a QR text or pairing code now (`WatchedTransport.deviceShowing`): a scan by QR or code is then unlinked by appkey too. */
  deviceShowing?(shown: string): string | undefined
  /**
   * Resolves once the gateway shows device `deviceId` open (`WatchedTransport.whenOpen`): a scan of a
   * gateway device answers then, after the 515 and the login, as on the simulated network; absent on a
   * peer server, where a scan answers once the phone paired the device.
   */
  whenOpen?(deviceId: string, signal: AbortSignal): Promise<void>
}

/** How long a scan waits for the gateway to show the paired device open (Baileys' openTimeoutMs). */
const OPEN_WAIT_MS = 30_000

/**
 * The local WhatsApp peer's phones behind the simulator's phone routes (`/_sim`, docs/simulator.md):
 * the same bodies and answers as the simulated network, so a black-box test written against the
 * simulator runs against the real Baileys stack. Phones send media only when the peer runs its media
 * host (`media: true`); groups are in phone-number addressing, without descriptions.
 */
export class PeerPhoneNetwork implements PhoneNetwork {
  /** The WhatsApp device JID of each gateway device a scan linked, for unlinks by device id. */
  private readonly linked = new Map<string, string>()

  constructor(
    private readonly peer: WaPeer,
    private readonly options: PeerPhoneNetworkOptions = {},
  ) {}

  async scan(given: LinkTarget, phone: string): Promise<string> {
    // A bare string is a QR (comma-separated keys) or a pairing code, as the simulated network reads it.
    const target = typeof given !== 'string' ? given : given.includes(',') ? { qr: given } : { code: given }
    const challenge =
      'deviceId' in target
        ? this.challengeOf(target.deviceId)
        : 'qr' in target
          ? { kind: 'qr' as const, qr: target.qr }
          : { kind: 'code' as const, code: target.code }
    const handset = this.peer.phone(digits(phone))
    const deviceId = 'deviceId' in target ? target.deviceId : this.options.deviceShowing?.(challenge.kind === 'qr' ? challenge.qr : challenge.code)
    // Waiting from before the pairing: the device may open as soon as it is paired.
    const paired = new AbortController()
    const opened = deviceId === undefined ? undefined : this.options.whenOpen?.(deviceId, AbortSignal.any([paired.signal, AbortSignal.timeout(OPEN_WAIT_MS)]))
    opened?.catch(() => undefined) // awaited below once paired
    let device: Awaited<ReturnType<WaPhone['scan']>>
    try {
      device = challenge.kind === 'qr' ? await handset.scan(challenge.qr) : await handset.enterCode(challenge.code)
    } catch (err) {
      paired.abort()
      const message = err instanceof Error ? err.message : String(err)
      // What the simulator answers for a QR or code nobody shows (404) and for one that does not fit (400).
      throw new TransportError(/^no (connection|client)/.test(message) ? 'not-found' : 'invalid', message)
    }
    if (deviceId !== undefined) this.linked.set(deviceId, device.jid)
    await opened?.catch(() => {
      throw new TransportError('timeout', `the phone paired the device, but the gateway did not show it open within ${OPEN_WAIT_MS / 1000} s`)
    })
    return 'deviceId' in target ? target.deviceId : device.jid
  }

  async sendFromPhone(from: string, to: string, message: PhoneMessage): Promise<string> {
    const phone = this.peer.phone(digits(from))
    if (to.endsWith('@g.us')) return this.sendToGroup(phone, to, message)
    const recipient = this.recipient(to)
    const plain = await this.plainContent(phone, message)
    if (plain) return phone.send(recipient, plain).id
    switch (message.type) {
      case 'reaction': {
        const own = phone.sent.some(m => m.id === message.target && m.to === recipient.pn)
        if (!own) this.received(phone, recipient, message.target)
        return phone.react(recipient, message.target, message.emoji, !own).id
      }
      case 'delete':
        if (!phone.sent.some(m => m.id === message.target && m.to === recipient.pn)) {
          if (this.inChat(phone, recipient, message.target)) throw new TransportError('invalid', 'only the sender can delete a message')
          throw new TransportError('not-found', `no message ${message.target} in that chat`)
        }
        return phone.revoke(recipient, message.target).id
      case 'button': {
        const tapped = this.received(phone, recipient, message.target).message
        const flow = tapped.interactiveMessage?.nativeFlowMessage ?? tapped.interactiveMessage?.carouselMessage
        if (!flow && !tapped.buttonsMessage && !tapped.listMessage)
          throw new TransportError('invalid', `message ${message.target} has no buttons for this phone`)
        if (!message.list) return this.tap(phone, recipient, message.target, message.buttonId)
        const reply = {
          title: message.text ?? '',
          listType: 1,
          singleSelectReply: { selectedRowId: message.buttonId },
          contextInfo: { stanzaId: message.target },
        }
        return phone.send(recipient, { listResponseMessage: reply }).id
      }
      default:
        throw new TransportError('invalid', `the local WhatsApp peer's phones do not send ${message.type} yet`)
    }
  }

  /** `creator` creates a group with `members` (phones of the peer): its devices and theirs get the add notification. */
  createGroup(creator: string, subject: string, members: string[] = [], options: { description?: string } = {}): GroupInfo {
    // As the simulated network answers (WhatsApp's phones allow 1 to 100 characters).
    if (typeof subject !== 'string' || subject.trim() === '' || subject.length > 100) {
      throw new TransportError('invalid', 'group subject must have 1 to 100 characters')
    }
    if (options.description) throw new TransportError('invalid', "the local WhatsApp peer's groups have no description yet")
    const phone = this.peer.phone(digits(creator))
    const jid = phone.createGroup(subject, ...members.map(m => this.recipient(m)))
    const group = this.peer.group(jid)!
    return {
      id: jid,
      subject,
      participants: group.members.map(pn => ({ id: `${pn}@s.whatsapp.net`, phone: pn, admin: group.admins.includes(pn) })),
      inviteCode: group.inviteCode,
    }
  }

  inviteLink(groupId: string): string | undefined {
    const group = this.peer.group(groupId)
    return group && `https://chat.whatsapp.com/${group.inviteCode}`
  }

  inbox(phone: string): InboxEntry[] {
    const number = digits(phone)
    // A read creates no phone: one made here took a random LID (a later POST /_sim/phones {lid} was refused) and stayed for good.
    const handset = this.peer.phones().find(p => p.pn === number)
    return handset ? inboxEntries(handset.inbox, handset.receipts) : []
  }

  registerPhone(phone: string, profile: PhoneProfile): string | undefined {
    const number = digits(phone)
    const wanted = typeof profile.lid === 'string' ? profile.lid.replace(/@lid$/, '') : undefined
    if (wanted !== undefined && !/^\d{5,20}$/.test(wanted)) throw new TransportError('invalid', 'lid must be <digits>@lid')
    const phones = this.peer.phones()
    // The peer finds an account by number or LID in one table: another phone's LID or number would take over its messages.
    const owner = wanted === undefined ? undefined : phones.find(p => p.pn !== number && (p.lid === `${wanted}@lid` || p.pn === wanted))
    if (owner) throw new TransportError('invalid', `${wanted}@lid is the ${owner.pn === wanted ? 'number' : 'LID'} of another phone`)
    const known = phones.find(p => p.pn === number)
    if (known && wanted && known.lid !== `${wanted}@lid`)
      throw new TransportError('invalid', `${number} already has the LID ${known.lid}: register it before its first use`)
    const handset = known ?? this.peer.phone(number, wanted ? { lid: wanted } : {})
    const withLid = profile.lid !== undefined && profile.lid !== ''
    handset.setProfile({
      ...(profile.pushName !== undefined ? { pushName: profile.pushName } : {}),
      addressing: !withLid ? 'pn' : profile.hidePhone ? 'hidden' : 'lid',
    })
    return withLid ? handset.lid : undefined
  }

  async unlink(deviceId: string): Promise<boolean> {
    const jid = this.linked.get(deviceId) ?? (deviceId.includes('@') ? deviceId : undefined)
    if (!jid) return false
    const owner = this.peer.phones().find(p => p.devices().some(d => d.jid === jid || d.lid === jid))
    if (!owner) return false
    owner.unlink(jid)
    this.linked.delete(deviceId)
    return true
  }

  stats(): NetworkStats & { peer: PeerStats } {
    const phones = this.peer.phones()
    const devices = phones.flatMap(p => p.devices())
    return {
      connections: devices.filter(d => d.connected).length,
      replaced: this.peer.stats.replaced,
      // One per message a device sent: a group message is in every member phone's inbox (and a 1:1 one also in the sender's phone, as a copy), under one id.
      sent: new Set(phones.flatMap(p => p.inbox.map(m => m.id))).size,
      received: this.peer.stats.phoneMessages,
      waiting: devices.reduce((n, d) => n + d.waiting, 0),
      peer: { ...this.peer.stats },
    }
  }

  private challengeOf(deviceId: string): LinkChallenge {
    const challenge = this.options.challengeOf?.(deviceId)
    if (!challenge) throw new TransportError('not-found', 'no pending link matches (QR expired, or code issued for another phone)')
    return challenge
  }

  /** The peer's phone `to` stands for (a phone number or `<pn>@s.whatsapp.net`). */
  private recipient(to: string): WaPhone {
    const number = digits(to.replace(/@.*$/, ''))
    const phone = this.peer.phones().find(p => p.pn === number || p.lid === `${number}@lid`)
    if (!phone) throw new TransportError('not-found', `${to} is not a phone of this network`)
    return phone
  }

  /** A text, contact, location or media message as it goes to a chat or a group alike; undefined for the kinds that name a chat's message. */
  private async plainContent(phone: WaPhone, message: PhoneMessage): Promise<proto.IMessage | undefined> {
    switch (message.type) {
      case 'text':
        return { conversation: message.text }
      case 'contact': {
        const pn = digits(message.phone)
        return { contactMessage: { displayName: message.name, vcard: contactVcard(message.name, pn) } }
      }
      case 'location': {
        const name = message.name ?? message.text
        return { locationMessage: { degreesLatitude: message.latitude, degreesLongitude: message.longitude, ...(name ? { name } : {}) } }
      }
      case 'image':
      case 'video':
      case 'audio':
      case 'document': {
        if (!this.peer.media)
          throw new TransportError('invalid', `the local WhatsApp peer's phones send ${message.type} only with its media host (media: true)`)
        if (message.base64 !== undefined && !/^[A-Za-z0-9+/]*={0,2}$/.test(message.base64)) throw new TransportError('invalid', 'base64 is not base64')
        const bytes = message.base64 !== undefined ? Buffer.from(message.base64, 'base64') : Buffer.from(`a ${message.type} from a phone`)
        const { caption, mimetype, fileName, voiceNote } = message
        return phone.mediaContent(message.type, bytes, { caption, mimetype, fileName, voiceNote })
      }
      default:
        return undefined
    }
  }

  /** `phone` sends to a group it is a member of (text, contact, location, media, a tap on buttons sent to the group). */
  private async sendToGroup(phone: WaPhone, groupId: string, message: PhoneMessage): Promise<string> {
    if (!this.peer.group(groupId)?.members.includes(phone.pn)) throw new TransportError('not-found', `${phone.pn} is no member of ${groupId}`)
    if (message.type === 'button' && !message.list) {
      const tapped = phone.inbox.find(m => m.id === message.target && m.to === groupId && !m.sentByOwnDevice)
      if (!tapped) throw new TransportError('not-found', `no message ${message.target} in that chat`)
      return this.tap(phone, this.recipient(tapped.from), message.target, message.buttonId)
    }
    const content = await this.plainContent(phone, message)
    if (!content) throw new TransportError('invalid', `the local WhatsApp peer's phones do not send ${message.type} to groups yet`)
    return phone.sendToGroup(groupId, content).id
  }

  /** `phone` taps a button of `target`; a button the message does not show as a quick reply is `invalid`. */
  private tap(phone: WaPhone, recipient: WaPhone, target: string, buttonId: string): string {
    try {
      return phone.tapButton(recipient, target, buttonId).id
    } catch (err) {
      throw new TransportError('invalid', err instanceof Error ? err.message : String(err))
    }
  }

  /** A message `recipient`'s devices sent `phone` in their 1:1 chat: a reaction or a tap names one (as on the simulator, one of a group they share is not in that chat: 404). */
  private received(phone: WaPhone, recipient: WaPhone, target: string) {
    const message = this.inChat(phone, recipient, target)
    if (!message) throw new TransportError('not-found', `no message ${target} in that chat`)
    return message
  }

  /** Message `target` of `recipient`'s devices in `phone`'s inbox, sent to their 1:1 chat (not to a group). */
  private inChat(phone: WaPhone, recipient: WaPhone, target: string) {
    return phone.inbox.find(m => m.id === target && m.from === recipient.pn && !m.sentByOwnDevice && !m.to.endsWith('@g.us'))
  }
}

function digits(phone: string): string {
  return phone.replace(/\D/g, '')
}
