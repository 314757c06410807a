import { TransportError } from 'zapgate'
import type { IncomingContent, IncomingMessage, SentMessage } from 'zapgate'
import { putBounded } from 'zapgate/adapter-kit'
import { lidFor, messageId, parseAddress } from './addresses.ts'
import type { Content } from './content.ts'
import type { SessionRegistry } from './sessions.ts'
import type { InboxContent, InboxEntry, PhoneProfile } from './types.ts'

/** A message the network remembers, to validate later reaction, delete, read and button targets. */
export interface LoggedMessage {
  id: string
  /** Sender phone. */
  from: string
  /** Recipient phone, or group id. */
  to: string
  type: InboxContent['type']
  timestamp: number
  /** The ids of its quick reply buttons (a buttons message or a carousel's cards): the only buttons a phone can tap. */
  replies?: string[]
}

/** Who sends: a phone, and the device it sends through (which gets no copy of its own message). */
interface Sender {
  phone: string
  deviceId?: string
}

/** Where a message goes: a phone, or a group with its members at sending time. */
export type Destination = { phone: string } | { group: string; members: string[] }

/** One message as it crossed the network (what `MemoryNetwork.onMessage` listeners get). */
export interface Traffic {
  id: string
  /** Sender phone. */
  from: string
  /** The device it was sent through; absent when a simulated phone sent it. */
  deviceId?: string
  /** Recipient phone, or group id. */
  to: string
  timestamp: number
  content: InboxContent
}

/** Limits of the post office (see MemoryNetworkOptions). */
interface PostLimits {
  logLimit: number
  inboxLimit: number
  phoneLimit: number
}

/**
 * Delivers messages: into the inbox of every receiving phone and, as `IncomingMessage`, to every
 * device linked to a receiving phone (and, marked fromMe, to the sender's other devices). Keeps the
 * bounded message log and the phones' profiles (LID, push name).
 */
export class Post {
  private readonly log = new Map<string, LoggedMessage>()
  private readonly inboxes = new Map<string, Filed[]>()
  private readonly profiles = new Map<string, { lid?: string; pushName?: string; hidePhone?: boolean }>()
  private readonly lids = new Map<string, string>()
  private readonly listeners = new Set<(traffic: Traffic) => void>()
  /** The phone whose inbox was filed last: the newest in `inboxes`, so filing to it again moves nothing. */
  private newestInbox: string | undefined

  constructor(
    private readonly limits: PostLimits,
    private readonly sessions: SessionRegistry,
  ) {}

  /** Set how the network presents `phone`; answers its LID, if it has one (a LID names one phone: another phone's, or no LID, is refused). */
  setProfile(phone: string, profile: PhoneProfile): string | undefined {
    const address = profile.lid === true ? undefined : parseAddress(profile.lid)
    // Refused, not ignored: ignoring it also dropped the LID the phone had.
    if (typeof profile.lid === 'string' && profile.lid !== '' && address?.kind !== 'lid') {
      throw new TransportError('invalid', `not a LID: ${JSON.stringify(profile.lid)} (a LID is <digits>@lid)`)
    }
    const lid = profile.lid === true ? lidFor(phone) : address?.kind === 'lid' ? address.lid : undefined
    const owner = lid === undefined ? undefined : this.lids.get(lid)
    if (owner !== undefined && owner !== phone) throw new TransportError('invalid', `${lid} is the LID of another phone`)
    const old = this.profiles.get(phone)
    if (old?.lid) this.lids.delete(old.lid)
    const stored = { lid, pushName: profile.pushName, hidePhone: Boolean(profile.hidePhone && lid) }
    putBounded(this.profiles, phone, stored, this.limits.phoneLimit, (_, evicted) => evicted.lid && this.lids.delete(evicted.lid))
    if (lid) this.lids.set(lid, phone)
    return lid
  }

  /** The phone's LID, when it has one. */
  lidOf(phone: string): string | undefined {
    return this.profiles.get(phone)?.lid
  }

  /** The phone's LID when the phone hides its number from others. */
  hiddenLid(phone: string): string | undefined {
    const profile = this.profiles.get(phone)
    return profile?.hidePhone ? profile.lid : undefined
  }

  /** Resolve an address to a phone or a group id (a LID through the profiles); undefined if unknown. */
  resolve(input: string): { phone: string } | { group: string } | undefined {
    const address = parseAddress(input)
    if (address?.kind === 'phone') return { phone: address.phone }
    if (address?.kind === 'group') return { group: address.id }
    const phone = address?.kind === 'lid' ? this.lids.get(address.lid) : undefined
    return phone === undefined ? undefined : { phone }
  }

  /** A remembered message, or undefined (unknown, deleted, or dropped from the log). */
  message(id: string): LoggedMessage | undefined {
    return this.log.get(id)
  }

  /** Forget a message (deleted for everyone). */
  forget(id: string): void {
    this.log.delete(id)
  }

  /** A copy of what `phone` has received, oldest first. */
  inbox(phone: string): InboxEntry[] {
    return (this.inboxes.get(phone) ?? []).slice(-this.limits.inboxLimit).map(asInboxEntry)
  }

  /** Empty `phone`'s inbox. */
  clearInbox(phone: string): void {
    this.inboxes.delete(phone)
    if (phone === this.newestInbox) this.newestInbox = undefined
  }

  /** Call `listener` for every message sent from now on; answers a function that stops it. */
  listen(listener: (traffic: Traffic) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /**
   * Deliver a message; `log` remembers it as a valid target for later messages. Answers its id and
   * timestamp, and the deliveries to devices under way: a simulated phone's send waits for them
   * (it is done once every receiving device has it); a device's send does not, and devices receive
   * it just after, as on the real network (so two gateways never wait on each other).
   */
  send(sender: Sender, destination: Destination, content: Content, log: boolean): { sent: SentMessage; deliveries: Promise<void>[] } {
    const sent: SentMessage = { id: messageId(), timestamp: Date.now() }
    const { id, timestamp } = sent
    const group = 'group' in destination ? destination.group : undefined
    const recipients = 'group' in destination ? destination.members.filter(p => p !== sender.phone) : [destination.phone]
    const to = group ?? recipients[0]
    for (const phone of recipients) this.file(phone, { id, from: sender.phone, timestamp, group, content: content.inbox })
    if (log) putBounded(this.log, id, logged({ id, from: sender.phone, to, type: content.inbox.type, timestamp }, content.inbox), this.limits.logLimit)
    if (this.listeners.size > 0) {
      // A copy: the inboxes share content.inbox, and a listener must not be able to change them.
      const traffic: Traffic = {
        id,
        from: sender.phone,
        ...(sender.deviceId ? { deviceId: sender.deviceId } : {}),
        to,
        timestamp,
        content: { ...content.inbox },
      }
      for (const listener of this.listeners) listener(traffic)
    }

    const profile = this.profiles.get(sender.phone)
    const lid = profile?.lid
    const hidden = Boolean(profile?.hidePhone && lid)
    const deliveries: Promise<void>[] = []
    for (const phone of recipients) {
      if (!this.sessions.hasDevicesBesides(phone, sender.deviceId)) continue
      const fromMe = phone === sender.phone
      const message = incoming(sent, group, content.incoming, group ?? (fromMe ? phone : hidden ? lid! : sender.phone), group ?? phone, fromMe)
      if (!hidden || fromMe) message.from = sender.phone
      if (lid) message.fromLid = lid // the account's own too: its LID, as the Baileys transport reports the self's
      if (profile?.pushName && !fromMe) message.pushName = profile.pushName
      for (const deviceId of this.sessions.devicesOf(phone)) if (deviceId !== sender.deviceId) deliveries.push(this.sessions.deliver(deviceId, message))
    }
    if (!recipients.includes(sender.phone) && this.sessions.hasDevicesBesides(sender.phone, sender.deviceId)) {
      // In the chat the contact's messages name: its LID when it hides its number (never the number it hides).
      const chat = group ?? this.hiddenLid(to) ?? to
      const echo = incoming(sent, group, content.incoming, chat, chat, true)
      echo.from = sender.phone
      if (lid) echo.fromLid = lid
      for (const deviceId of this.sessions.devicesOf(sender.phone)) if (deviceId !== sender.deviceId) deliveries.push(this.sessions.deliver(deviceId, echo))
    }
    return { sent, deliveries }
  }

  /** Put a read receipt for message `target` from `reader` into `sender`'s inbox. */
  receipt(reader: string, sender: string, target: string, group?: string): void {
    this.file(sender, { id: messageId(), from: reader, timestamp: Date.now(), group, content: { type: 'read', target } })
  }

  // --- Internal helpers ---

  private file(phone: string, entry: Filed): void {
    const inbox = this.inboxes.get(phone) ?? []
    // Trimmed in bulk (readers take the last inboxLimit): dropping one entry per message moved the
    // whole list each time, the costliest step of a send.
    inbox.push(entry)
    if (inbox.length >= 2 * this.limits.inboxLimit) inbox.splice(0, inbox.length - this.limits.inboxLimit)
    if (phone === this.newestInbox) return
    putBounded(this.inboxes, phone, inbox, this.limits.phoneLimit)
    this.newestInbox = phone
  }
}

/**
 * An inbox entry as filed: the content object shared, not copied (a copy per message, spread into
 * the entry, cost more than the rest of filing it); inbox() flattens entries when they are read.
 */
interface Filed {
  id: string
  from: string
  timestamp: number
  group: string | undefined
  content: InboxContent
}

/**
 * What a receiving device gets of a message, built property by property (conditional spreads go
 * through V8's slow path, and this runs for every message on the network).
 */
function incoming(
  { id, timestamp }: SentMessage,
  group: string | undefined,
  content: IncomingContent,
  chat: string,
  to: string,
  fromMe: boolean,
): IncomingMessage {
  const message: IncomingMessage = { id, isGroup: group !== undefined, timestamp, content, chat, to, fromMe }
  if (group) message.group = group
  return message
}

function asInboxEntry({ id, from, timestamp, group, content }: Filed): InboxEntry {
  const entry = { id, from, ...content, timestamp } as InboxEntry
  if (group) entry.group = group
  return entry
}

/** A log entry with the quick reply ids of a buttons message or carousel (a text, the most of sends, takes no copy or list: the send path). */
function logged(entry: LoggedMessage, content: InboxContent): LoggedMessage {
  if (content.type !== 'buttons' && content.type !== 'carousel') return entry
  const buttons = content.type === 'buttons' ? content.buttons : content.cards.flatMap(card => card.buttons)
  const replies = buttons.flatMap(button => (button.type === 'reply' ? [button.id] : []))
  if (replies.length > 0) entry.replies = replies
  return entry
}
