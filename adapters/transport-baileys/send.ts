import type { AnyMessageContent, proto, WAMessage } from '@whiskeysockets/baileys'
import { TransportError } from 'zapgate'
import type { MessageRef, OutgoingMessage, SentMessage } from 'zapgate'
import type { Logger } from 'zapgate'
import { chatName, type AddressResolver } from './addresses.ts'
import { socketCall } from './errors.ts'
import { buttonsContent, buttonsText, carouselContent, carouselText, checkInteractive, interactiveNodes } from './interactive.ts'
import { isAdmin } from './groups.ts'
import { brazilianAlternative, isGroupJid, isLidJid, normalizeJid } from './jid.ts'
import { messageKey, type MessageStore, type StoredMessage } from './message-store.ts'
import { sameScope, scopeOf, scopeOfRef } from './message-scope.ts'
import type { DeviceSession } from './session/session.ts'
import type { BaileysModule, SocketLike } from './types.ts'
import { invalid, validateOutgoing } from './validate.ts'
import { prepareVoiceNote } from './voice-note.ts'

/** What sending needs: the device's open socket and session, the message store, the address resolver. */
interface SendDeps {
  lib: BaileysModule
  session: DeviceSession
  socket: SocketLike
  messages: MessageStore
  resolver: AddressResolver
  buttonsFallback: 'interactive' | 'text'
  timeoutMs: number
  /** ffmpeg for voice notes that are not OGG/Opus (false: none). */
  ffmpegPath: string | false
  logger: Logger
  /** A send timed out on `socket` (half-open connection): restart it. */
  stalled(socket: SocketLike): Promise<void>
}

/**
 * Send one message and remember its key (and content, for Baileys' retries). Reactions and deletes go
 * to the chat of their target, whose key must be remembered (sent or received by this device).
 */
export async function sendOutgoing(deps: SendDeps, to: string, message: OutgoingMessage): Promise<SentMessage> {
  validateOutgoing(message)
  if (message.kind === 'reaction' || message.kind === 'delete') {
    const target = await requireTarget(deps, message.target)
    if (message.kind === 'reaction') return send(deps, target.key.remoteJid, { react: { text: message.emoji, key: messageKey(target.key) } })
    if (!target.key.fromMe) await requireAdmin(deps, target.key.remoteJid)
    const sent = await send(deps, target.key.remoteJid, { delete: messageKey(target.key) })
    // Deleted for everyone: no later reaction, delete or read names it (as on the network, where it is gone).
    await deps.messages.forget(target.key).catch(err => deps.logger.warn({ err, messageId: target.key.id }, 'could not forget a deleted message'))
    return sent
  }
  const jid = await deps.resolver.resolve(deps.socket, to, deps.timeoutMs)
  if (message.kind === 'buttons' || message.kind === 'carousel') {
    if (deps.buttonsFallback === 'text') return send(deps, jid, { text: message.kind === 'buttons' ? buttonsText(message) : carouselText(message) })
    checkInteractive(message)
    const content =
      message.kind === 'buttons'
        ? buttonsContent(message)
        : await socketCall('media upload', deps.timeoutMs, () => carouselContent(deps.lib, deps.socket, message))
    return relay(deps, jid, content)
  }
  if (message.kind === 'media' && message.media === 'audio' && message.voiceNote) {
    const { ffmpegPath, timeoutMs, logger } = deps
    const audio = await prepareVoiceNote(message.file.data, message.file.mimetype, { ffmpegPath, timeoutMs, logger })
    return send(deps, jid, { audio: audio.data, mimetype: audio.mimetype, ...(audio.ptt ? { ptt: true } : {}) })
  }
  return send(deps, jid, messageContent(message))
}

/** Send a read receipt for a received message, with its key as received (participant in groups). */
export async function markRead(deps: Pick<SendDeps, 'socket' | 'messages' | 'timeoutMs'>, target: MessageRef): Promise<void> {
  if (!target || typeof target.id !== 'string' || target.id === '') invalid('target must name a message id')
  const all = await deps.messages.all(target.id)
  // Named by its chat, or (a group message) by its sender's number, as the API's `to` names it: the receipt goes to the group either way.
  const bySender = all.filter(({ key }) => sentInGroupBy(key, target.chat))
  const phones = await lidPhones(deps.socket, [target.chat, ...all.map(({ key }) => key.remoteJid)])
  const stored = pick(all, { ...target, fromMe: false }, phones) ?? pick(bySender, { id: target.id, chat: '', fromMe: false }) // chat '': any, bySender named it
  if (!stored) throw new TransportError('not-found', `no received message ${target.id} in that chat, or several (senders)`)
  if (isGroupJid(stored.key.remoteJid) && !stored.key.participant) throw new TransportError('not-found', `the sender of ${target.id} is unknown`)
  await socketCall('read receipt', deps.timeoutMs, () => deps.socket.readMessages([{ ...messageKey(stored.key), fromMe: false }]))
}

/** The Baileys content of a plain (non-interactive, non-target) message: media from bytes, never a path (voice notes: see prepareVoiceNote). */
function messageContent(message: Exclude<OutgoingMessage, { kind: 'reaction' | 'delete' | 'buttons' | 'carousel' }>): AnyMessageContent {
  switch (message.kind) {
    case 'text':
      return { text: message.text }
    case 'contact':
      return { contacts: { displayName: message.name, contacts: [{ displayName: message.name, vcard: vcard(message.name, message.phone) }] } }
    case 'location':
      return { location: { degreesLatitude: message.latitude, degreesLongitude: message.longitude, ...(message.text ? { name: message.text } : {}) } }
    case 'media': {
      const { data, mimetype, fileName } = message.file
      const caption = message.caption ? { caption: message.caption } : {}
      switch (message.media) {
        case 'image':
          return { image: data, mimetype, ...caption }
        case 'video':
          return { video: data, mimetype, ...caption }
        case 'audio':
          return { audio: data, mimetype: mimetype || 'audio/mp4' }
        case 'document':
          return { document: data, mimetype, fileName: fileName || 'file', ...caption }
      }
    }
  }
}

/** A vCard 3.0 whose phone carries `waid`, so that WhatsApp offers to message the contact. */
function vcard(name: string, phone: string): string {
  const digits = phone.replace(/\D/g, '')
  const escaped = name
    .replace(/\\/g, '\\\\')
    .replace(/[,;]/g, m => `\\${m}`)
    .replace(/\r\n|[\r\n\u0085\u2028\u2029]/g, '\\n') // any line break (a lone CR too: some readers end a line there), so no text of the name starts a line of its own
  return ['BEGIN:VCARD', 'VERSION:3.0', `FN:${escaped}`, `N:;${escaped};;;`, `TEL;type=CELL;type=VOICE;waid=${digits}:+${digits}`, 'END:VCARD'].join('\n')
}

// --- Internal helpers ---

async function send(deps: SendDeps, jid: string, content: AnyMessageContent): Promise<SentMessage> {
  const id = deps.lib.generateMessageIDV2(deps.socket.user?.id)
  deps.session.memory.ownIds.set(id, true)
  // No link preview: Baileys would fetch a text's first URL from this server (with link-preview-js installed), past the URL guard.
  const sent = await watched(deps, jid, () => deps.socket.sendMessage(jid, 'text' in content ? { ...content, linkPreview: null } : content, { messageId: id }))
  const message: WAMessage = sent ?? { key: { remoteJid: jid, fromMe: true, id }, messageTimestamp: Math.floor(Date.now() / 1000) }
  return remember(deps, message)
}

async function relay(deps: SendDeps, jid: string, content: proto.IMessage): Promise<SentMessage> {
  const id = deps.lib.generateMessageIDV2(deps.socket.user?.id)
  deps.session.memory.ownIds.set(id, true)
  const message = deps.lib.generateWAMessageFromContent(jid, content, { userJid: deps.socket.user?.id ?? '', messageId: id })
  await watched(deps, jid, () => deps.socket.relayMessage(jid, message.message!, { messageId: id, additionalNodes: interactiveNodes() }))
  return remember(deps, message)
}

/**
 * A send with its deadline. A send that times out on an open socket means a half-open connection
 * (receiving may still work, every send stalls): the socket is restarted, and the send fails with
 * 'timeout' (it may or may not have reached WhatsApp). A group send WhatsApp refuses as `forbidden`
 * is one to a group the device is not in (every group send asks for the participant list, which
 * WhatsApp refuses to non-members; a member's post it refuses later, as a delivery failure): the
 * group is not found, as on the simulated network, rather than "not admin".
 */
async function watched<T>(deps: SendDeps, jid: string, call: () => Promise<T>): Promise<T> {
  try {
    return await socketCall('send', deps.timeoutMs, call)
  } catch (error) {
    // Not awaited: the restart waits for the device's lock, and the caller should hear of its timeout now.
    if (error instanceof TransportError && error.code === 'timeout')
      void deps.stalled(deps.socket).catch(err => deps.logger.error({ err }, 'restarting a stalled socket failed'))
    if (error instanceof TransportError && error.code === 'not-admin' && isGroupJid(jid))
      throw new TransportError('not-found', `send: the device is not a member of ${jid}`, { cause: error })
    throw error
  }
}

async function remember(deps: SendDeps, message: WAMessage): Promise<SentMessage> {
  const id = message.key.id!
  deps.session.memory.ownIds.set(id, true)
  await deps.messages.remember(message, true).catch(err => deps.logger.warn({ err, messageId: id }, 'could not remember a sent message'))
  const seconds = Number(message.messageTimestamp ?? 0)
  // The chat as the contact's replies and the send's failures name it (`to` may be the ninth digit's other form, or a LID).
  const chat = await chatName(message.key.remoteJid!, deps.socket).catch(() => undefined)
  return { id, timestamp: seconds > 0 ? seconds * 1000 : Date.now(), ...(chat ? { chat } : {}) }
}

/**
 * Someone else's message is deleted for everyone only by a group admin (WhatsApp's admin revoke): in a 1:1
 * chat, or in a group whose known members do not list the device as admin, the delete is `invalid` rather
 * than sent and answered as deleted. Metadata that cannot be fetched decides nothing: the send reports its own error.
 */
async function requireAdmin(deps: SendDeps, chat: string): Promise<void> {
  if (!isGroupJid(chat)) invalid('only the sender can delete a message in a 1:1 chat')
  const metadata = await deps.session.memory.groups.lookup(chat, () => socketCall('group metadata', deps.timeoutMs, () => deps.socket.groupMetadata(chat)))
  if (metadata && !isAdmin(metadata, deps.session)) invalid(`only the sender or a group admin can delete a member's message in ${chat}`)
}

async function requireTarget(deps: SendDeps, target: MessageRef): Promise<StoredMessage> {
  const all = await deps.messages.all(target.id)
  const stored = pick(all, target, await lidPhones(deps.socket, [target.chat, ...all.map(({ key }) => key.remoteJid)]))
  if (!stored) throw new TransportError('not-found', `no message ${target.id} of that chat known to this device, or several`)
  return stored
}

/**
 * The remembered message a MessageRef names among those with its id (never a reaction or deletion: no message to
 * react to, delete or read, as on the network). Ids are the sender's choice (any
 * chat, group member or the device itself may use one), so only those of the named chat (and sender,
 * when `participant` is given) count: for a delete (`fromMe` true) the device's own message first (one
 * id is one own message); for a read receipt (`fromMe` false) received ones only; then the message
 * they all are (one scope, message-scope.ts: the first record of it). When they are several (two group
 * members, or an own message and a contact's copy of its id), undefined: the caller cannot tell which.
 */
function pick(stored: StoredMessage[], target: MessageRef, phones = new Map<string, string>()): StoredMessage | undefined {
  const named = stored.filter(
    ({ key, action }) => !action && inChat(key, target.chat, phones) && (!target.participant || sameScope(scopeOf(key), scopeOfRef(target))),
  )
  const own = named.find(message => message.key.fromMe)
  if (own && target.fromMe === true) return own
  const candidates = target.fromMe === false ? named.filter(message => !message.key.fromMe) : named
  const [first] = candidates
  return first && candidates.every(({ key }) => sameScope(scopeOf(key), scopeOf(first.key))) ? first : undefined
}

/**
 * Whether a remembered key belongs to the chat the caller named (`MessageRef.chat`: phone digits, a
 * `<digits>@lid` or a group id; none: any chat; a Brazilian mobile number also names its other form, with
 * or without the ninth digit, as the send resolved it; a LID also names the phone `phones` maps it to,
 * either side). A target of another chat is not found, as on the network: a reaction or read receipt
 * never goes to a chat other than the one the caller named.
 */
function inChat(key: StoredMessage['key'], chat: string | undefined, phones: Map<string, string>): boolean {
  if (!chat) return true
  if (isGroupJid(chat) || isGroupJid(key.remoteJid)) return key.remoteJid === chat
  const named = [chat, phones.get(chat)]
  const forms = [key.remoteJid, key.remoteJidAlt, phones.get(normalizeJid(key.remoteJid))]
  return named.some(form => !!form && forms.some(jid => namesPhone(jid, form)))
}

/**
 * The phone JID of each LID among `jids` as the socket's LID mappings know it (their store: no network
 * query), so that a 1:1 chat named by the contact's LID (the webhook's `fromLid`) finds a message sent
 * to its phone, and a chat named by the phone one sent to (or received from) its LID.
 */
async function lidPhones(socket: SocketLike, jids: (string | undefined)[]): Promise<Map<string, string>> {
  const phones = new Map<string, string>()
  for (const lid of new Set(jids.filter(isLidJid).map(normalizeJid))) {
    const phone = await socket.signalRepository?.lidMapping.getPNForLID(lid).catch(() => null)
    if (phone) phones.set(lid, normalizeJid(phone))
  }
  return phones
}

/** Whether a remembered key is a group message whose sender is the phone (or `<digits>@lid`) `chat` names. */
function sentInGroupBy(key: StoredMessage['key'], chat: string | undefined): boolean {
  return !!chat && !isGroupJid(chat) && isGroupJid(key.remoteJid) && [key.participant, key.participantAlt].some(jid => namesPhone(jid, chat))
}

/** Whether `jid` is the account `chat` names: its digits, or a Brazilian mobile number's other form (with or without the ninth digit). */
function namesPhone(jid: string | null | undefined, chat: string): boolean {
  const digits = chat.split('@')[0].replace(/\D/g, '')
  const wanted = [digits, chat.includes('@') ? undefined : brazilianAlternative(digits)]
  return !!jid && wanted.includes(jid.split('@')[0].split(':')[0])
}
