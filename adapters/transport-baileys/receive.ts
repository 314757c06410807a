import type { Agent } from 'node:http'
import type { BaileysEventMap, GroupParticipant, WAMessage } from '@whiskeysockets/baileys'
import type PQueue from 'p-queue'
import type { IncomingContent, IncomingMessage, MediaKind, TransportEvent } from 'zapgate'
import type { Logger } from 'zapgate'
import { socketCall, withTimeout } from './errors.ts'
import { announcedSize, classifyContent, describeMessage } from './incoming.ts'
import { isGroupJid, isIgnoredJid, isLidJid, isPnJid, normalizeJid, phoneOf } from './jid.ts'
import { sameScope, scopeOf, type MessageScope } from './message-scope.ts'
import { MAX_PER_ID, type MessageStore } from './message-store.ts'
import { readAll } from './http-get.ts'
import type { DeviceSession } from './session/session.ts'
import type { BaileysModule, MediaDownloader, SocketLike } from './types.ts'

/**
 * Media messages that may wait for a download slot, per device. Past it (a media host that stalls, each
 * download taking its whole time-out while a busy group keeps sending), media is reported at once with
 * metadata only: the queue, and how late its last report comes, stay bounded.
 */
const MAX_WAITING_DOWNLOADS = 100

/** What incoming message handling needs. */
interface ReceiveDeps {
  deviceId: string
  lib: BaileysModule
  messages: MessageStore
  downloadMedia: MediaDownloader
  inlineMediaMaxBytes: number
  downloadTimeoutMs: number
  /** The device's media downloads (a few at a time), apart from its other messages. */
  downloads: PQueue
  /** The device's proxy agent, for media downloads. */
  agent?: Agent
  logger: Logger
  emit(event: TransportEvent): Promise<void>
}

/**
 * Report the messages of one messages.upsert (`notify` and `append` alike), one at a time: each is
 * recorded by the gateway before the next is looked at. Media that is downloaded to inline its bytes
 * is reported once its download ends (or fails, or times out: then with metadata only), on the
 * device's download queue: a slow download never holds back the device's later messages, which may
 * therefore be reported before it (a revoke of it excepted: reported after it); past MAX_WAITING_DOWNLOADS waiting, with metadata only at once. Skipped: stubs without content, view-once messages (`key.isViewOnce`), statuses, broadcasts and channels,
 * duplicates (the same id in the same scope: chat, direction, group sender; see message-scope.ts), echoes of the gateway's own sends
 * (the core publishes those itself), and content the gateway does not report. Revokes are taken from here only (never from
 * messages.update), reactions from here only (never from messages.reaction).
 */
export async function receiveUpsert(deps: ReceiveDeps, session: DeviceSession, socket: SocketLike, upsert: BaileysEventMap['messages.upsert']): Promise<void> {
  for (const message of upsert.messages) {
    try {
      await receiveOne(deps, session, socket, message)
    } catch (err) {
      deps.logger.error({ err, deviceId: deps.deviceId, messageId: message.key?.id }, 'incoming message not reported')
    }
  }
}

// --- Internal helpers ---

async function receiveOne(deps: ReceiveDeps, session: DeviceSession, socket: SocketLike, message: WAMessage): Promise<void> {
  const { remoteJid, id } = message.key ?? {}
  if (!message.message || !remoteJid || !id || isIgnoredJid(remoteJid)) return
  // View-once media is the phone's only (docs/api.md): Baileys marks its placeholder's key, and the phone's answer
  // to the placeholder resend it then asks for comes under that key, with the content.
  if (message.key.isViewOnce) return
  // Nothing to report is not marked seen: a group message that decrypted only in part (the sender key, not
  // the skmsg: a CIPHERTEXT stub) comes again whole, with the same id, after Baileys' retry receipt.
  const content = classifyContent(deps.lib, message)
  if (!content || (content.kind === 'delete' && (await ignoredRevoke(deps, session, socket, message)))) return
  const scope = scopeOf(message.key, await otherForms(socket, message.key))
  const seen = session.memory.seen.get(id) ?? []
  if (seen.some(earlier => sameScope(earlier, scope))) return
  // Seen from here, so that a duplicate arriving while this one is in flight is skipped; forgotten again
  // unless the gateway recorded it (its emit resolved), so that the network's next delivery is reported.
  session.memory.seen.set(id, [...seen, scope].slice(-MAX_PER_ID))
  const unseen = (err: unknown) => (
    session.memory.seen.set(
      id,
      (session.memory.seen.get(id) ?? []).filter(s => s !== scope),
    ),
    Promise.reject(err)
  )
  if (message.key.fromMe && session.memory.ownIds.has(id)) return
  // Reported before a restart, or an own send; a message of another chat (or group sender) with this id is another message.
  const stored = await deps.messages.all(id).catch(() => [])
  if (stored.some(earlier => sameScope(scopeOf(earlier.key), scope))) return
  const size = isMediaContent(content) ? announcedSize(deps.lib, message) : undefined
  if (isMediaContent(content) && (size === undefined || size <= deps.inlineMediaMaxBytes) && deps.downloads.size < MAX_WAITING_DOWNLOADS) {
    const work = deps.downloads.add(() => report(deps, session, socket, message, content, true).catch(unseen))
    return pendingMedia(
      session,
      id,
      work.catch(err => deps.logger.error({ err, deviceId: deps.deviceId, messageId: id }, 'incoming media not reported')),
    )
  }
  // A revoke of media still waiting for its download comes after it (its Deletada, then the forgetting of what was remembered).
  const media = content.kind === 'delete' ? session.memory.mediaReports.get(content.target) : undefined
  if (media) {
    const work = media.then(() => report(deps, session, socket, message, content, false).catch(unseen))
    return session.memory.track(work.catch(err => deps.logger.error({ err, deviceId: deps.deviceId, messageId: id }, 'incoming revoke not reported')))
  }
  await report(deps, session, socket, message, content, false).catch(unseen)
}

/** Track the report of media on the download queue (it never rejects), known by its id until it settles. */
function pendingMedia(session: DeviceSession, id: string, reported: Promise<unknown>): void {
  const reports = session.memory.mediaReports
  const entry = Promise.all([reports.get(id), reported])
  reports.set(id, entry)
  session.memory.track(entry.finally(() => reports.get(id) === entry && reports.delete(id)))
}

/**
 * Describe, report and remember one message (`download`: with its media bytes inlined when they come in
 * time). Remembered (the message store skips it when it comes again, after a restart too) only once the
 * gateway recorded it: remembered first, a message whose emit failed, or whose process died before the
 * emit returned, would never be reported.
 */
async function report(
  deps: ReceiveDeps,
  session: DeviceSession,
  socket: SocketLike,
  message: WAMessage,
  content: IncomingContent,
  download: boolean,
): Promise<void> {
  const media = isMediaContent(content)
  const withBytes = download && media ? await inlineMedia(deps, session, socket, message, content) : content
  const incoming = await describeMessage(message, withBytes, session.self(), lid => lidToPhone(socket, lid))
  await deps.emit({ type: 'message', deviceId: deps.deviceId, message: incoming })
  if (content.kind === 'delete') await forgetRevoked(deps, session, socket, message, content.target)
  await deps.messages
    .remember(withChatPhone(message, incoming), media)
    .catch(err => deps.logger.warn({ err, messageId: message.key.id }, 'could not remember a message key'))
}

/**
 * Media content with its bytes as base64 when they are small enough and download in time; else as
 * it was (metadata only: the host can fetch the bytes later with `downloadMedia`). A shutdown stops
 * the wait at once.
 */
async function inlineMedia(deps: ReceiveDeps, session: DeviceSession, socket: SocketLike, message: WAMessage, content: MediaContent): Promise<MediaContent> {
  try {
    const download = withTimeout(
      deps
        .downloadMedia(message, { socket, logger: deps.logger, agent: deps.agent, maxBytes: deps.inlineMediaMaxBytes })
        .then(data => (Buffer.isBuffer(data) ? data : readAll(data, deps.inlineMediaMaxBytes))),
      deps.downloadTimeoutMs,
      'media download',
    )
    download.catch(() => undefined)
    const data = await Promise.race([download, session.memory.stopping.then(() => undefined)])
    if (!data) return content
    return data.length <= deps.inlineMediaMaxBytes ? { ...content, base64: data.toString('base64') } : content
  } catch (err) {
    deps.logger.warn({ err, deviceId: deps.deviceId, messageId: message.key.id }, 'media download failed; reporting metadata only')
    return content
  }
}

/**
 * The message to remember: a 1:1 LID chat reported under a phone its key does not carry (found in the
 * LID mappings) keeps that phone as `remoteJidAlt`, so that a reaction, delete or read receipt naming the
 * chat the webhook gave finds it. On an own message (sent from the phone) Baileys' `remoteJidAlt` is the
 * sender's alternate id (`sender_pn`): the account itself, never the chat, so it is not kept as the chat's.
 */
function withChatPhone(message: WAMessage, incoming: IncomingMessage): WAMessage {
  const { remoteJid, remoteJidAlt, fromMe } = message.key
  const ownAlt = !!fromMe && !!remoteJidAlt && (phoneOf(remoteJidAlt) === incoming.from || normalizeJid(remoteJidAlt) === incoming.fromLid)
  if ((remoteJidAlt && !ownAlt) || !isLidJid(remoteJid)) return message
  const chatPhone = /^\d+$/.test(incoming.chat) ? `${incoming.chat}@s.whatsapp.net` : undefined
  return chatPhone || ownAlt ? { ...message, key: { ...message.key, remoteJidAlt: chatPhone } } : message
}

/**
 * Whether WhatsApp's clients ignore a contact's revoke (the server cannot read it to refuse it): in a 1:1 chat one naming
 * a message the contact received (its key's fromMe false: the device's own), in a group one naming another member's
 * message (compared by JID, or by the phone the LID mappings give) from a member the group's metadata shows is no admin
 * (metadata that cannot be had ignores none). Such a revoke deletes nothing: it is no Deletada, and the device forgets
 * nothing for it. The account's own phone is trusted.
 */
async function ignoredRevoke(deps: ReceiveDeps, session: DeviceSession, socket: SocketLike, revoke: WAMessage): Promise<boolean> {
  if (revoke.key.fromMe) return false
  const named = deps.lib.normalizeMessageContent(revoke.message)?.protocolMessage?.key
  if (!isGroupJid(revoke.key.remoteJid)) return named?.fromMe === false
  const member = named?.participant ? normalizeJid(named.participant) : undefined
  if (!member || (await oneMember(socket, member, scopeOf(revoke.key).senders))) return false
  return (await groupAdmin(deps, session, socket, revoke)) === false
}

/**
 * A message deleted for everyone is gone (as after the device's own deletes, send.ts): no later reaction, delete or
 * read receipt names it, and no retry request is answered with its content. The revoke names its sender's own message
 * (its scope: chat, direction, group sender), or in a group, an admin's revoke (ignoredRevoke let through no member's
 * known to be none), the member its key names: the device's own message when that member is the device's account (by
 * phone or LID) and the sender is an admin in the group's metadata.
 */
async function forgetRevoked(deps: ReceiveDeps, session: DeviceSession, socket: SocketLike, revoke: WAMessage, target: string): Promise<void> {
  const named = deps.lib.normalizeMessageContent(revoke.message)?.protocolMessage?.key
  const scope = scopeOf(revoke.key, await otherForms(socket, revoke.key))
  const member = isGroupJid(revoke.key.remoteJid) && named?.participant ? normalizeJid(named.participant) : undefined
  const self = session.self()
  const ownMessage = !!member && !revoke.key.fromMe && ((!!self.phone && phoneOf(member) === self.phone) || member === self.lid)
  const own = ownMessage && (await groupAdmin(deps, session, socket, revoke)) === true
  const deleted: MessageScope = own
    ? { fromMe: true, chats: [], senders: [] }
    : member && !scope.senders.includes(member)
      ? { fromMe: false, chats: [normalizeJid(revoke.key.remoteJid!)], senders: [member] }
      : scope
  await deps.messages.forgetScope(target, deleted).catch(err => deps.logger.warn({ err, messageId: target }, 'could not forget a message deleted for everyone'))
}

/**
 * Whether a group revoke's sender is an admin of the group (its metadata cached, else asked for): only an admin
 * deletes another member's message, so a member's revoke naming the device's own message (WhatsApp's clients ignore
 * it) never makes the device forget it. Undefined when the metadata cannot be had.
 */
async function groupAdmin(deps: ReceiveDeps, session: DeviceSession, socket: SocketLike, revoke: WAMessage): Promise<boolean | undefined> {
  const group = normalizeJid(revoke.key.remoteJid!)
  const sender = [revoke.key.participant, revoke.key.participantAlt].filter((jid): jid is string => !!jid).map(normalizeJid)
  const fetch = () => socketCall('group metadata', deps.downloadTimeoutMs, () => socket.groupMetadata(group))
  const metadata = await session.memory.groups.lookup(group, fetch).catch(() => undefined)
  const admin = (p: GroupParticipant) => p.admin === 'admin' || p.admin === 'superadmin'
  if (!metadata?.participants) return undefined
  return metadata.participants.some(p => admin(p) && [p.id, p.phoneNumber, p.lid].some(jid => !!jid && sender.includes(normalizeJid(jid))))
}

/** Whether `member` is one of `senders` (normalised JIDs of one group sender): by the same JID, or by the phone the LID mappings give. */
async function oneMember(socket: SocketLike, member: string, senders: string[]): Promise<boolean> {
  if (senders.includes(member)) return true
  const phone = async (jid: string) => phoneOf(jid) ?? (isLidJid(jid) ? await lidToPhone(socket, jid).catch(() => undefined) : undefined)
  const memberPhone = await phone(member)
  if (!memberPhone) return false
  for (const sender of senders) if ((await phone(sender)) === memberPhone) return true
  return false
}

type MediaContent = Extract<IncomingContent, { kind: MediaKind }>

function isMediaContent(content: IncomingContent): content is MediaContent {
  return content.kind === 'image' || content.kind === 'video' || content.kind === 'audio' || content.kind === 'document'
}

/** The phone JID the LID mappings know for a 1:1 LID chat whose key carries none (another form of the chat, for the duplicate check). */
async function otherForms(socket: SocketLike, key: WAMessage['key']): Promise<string[]> {
  if (key.fromMe || !isLidJid(key.remoteJid) || isPnJid(key.remoteJidAlt)) return []
  const pn = await socket.signalRepository?.lidMapping.getPNForLID(normalizeJid(key.remoteJid)).catch(() => null)
  return pn ? [normalizeJid(pn)] : []
}

async function lidToPhone(socket: SocketLike, lid: string): Promise<string | undefined> {
  const pn = await socket.signalRepository?.lidMapping.getPNForLID(lid)
  return pn ? phoneOf(normalizeJid(pn)) : undefined
}
