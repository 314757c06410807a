import type { BaileysEventMap, WAMessage } from '@whiskeysockets/baileys'
import type { IncomingContent, MediaKind, TransportEvent } from 'zapgate'
import type { Logger } from 'zapgate'
import { withTimeout } from './errors.ts'
import { announcedSize, classifyContent, describeMessage } from './incoming.ts'
import { isIgnoredJid, normalizeJid, phoneOf } from './jid.ts'
import type { MessageStore } from './message-store.ts'
import type { DeviceSession } from './session.ts'
import type { BaileysModule, MediaDownloader, SocketLike } from './types.ts'

/** What incoming message handling needs. */
export interface ReceiveDeps {
  deviceId: string
  lib: BaileysModule
  messages: MessageStore
  downloadMedia: MediaDownloader
  inlineMediaMaxBytes: number
  downloadTimeoutMs: number
  logger: Logger
  emit(event: TransportEvent): Promise<void>
}

/**
 * Report the messages of one messages.upsert (`notify` and `append` alike), one at a time: each is
 * recorded by the gateway before the next is looked at. Skipped: stubs without content, statuses,
 * broadcasts and channels, duplicates (by chat and id), echoes of the gateway's own sends (the core
 * publishes those itself), and content the gateway does not report. Revokes are taken from here only
 * (never from messages.update), reactions from here only (never from messages.reaction).
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
  const seenKey = `${normalizeJid(remoteJid)}:${id}`
  if (session.seen.has(seenKey)) return
  session.seen.set(seenKey, true)
  if (message.key.fromMe && session.ownIds.has(id)) return
  if (await deps.messages.find(id).catch(() => undefined)) return // reported before a restart, or an own send
  let content = classifyContent(deps.lib, message)
  if (!content) return
  const isMedia = isMediaContent(content)
  if (isMediaContent(content)) content = await inlineMedia(deps, socket, message, content)
  const incoming = await describeMessage(message, content, session.self(), lid => lidToPhone(socket, lid))
  await deps.messages.remember(message, isMedia).catch(err => deps.logger.warn({ err, messageId: id }, 'could not remember a message key'))
  await deps.emit({ type: 'message', deviceId: deps.deviceId, message: incoming })
}

/** Media content with its bytes as base64 when it is small enough (and downloads); else as it was. */
async function inlineMedia(deps: ReceiveDeps, socket: SocketLike, message: WAMessage, content: MediaContent): Promise<MediaContent> {
  const size = announcedSize(deps.lib, message)
  if (size !== undefined && size > deps.inlineMediaMaxBytes) return content
  try {
    const data = await withTimeout(deps.downloadMedia(message, { socket, logger: deps.logger }), deps.downloadTimeoutMs, 'media download')
    return data.length <= deps.inlineMediaMaxBytes ? { ...content, base64: data.toString('base64') } : content
  } catch (err) {
    deps.logger.warn({ err, deviceId: deps.deviceId, messageId: message.key.id }, 'media download failed; reporting metadata only')
    return content
  }
}

type MediaContent = Extract<IncomingContent, { kind: MediaKind }>

function isMediaContent(content: IncomingContent): content is MediaContent {
  return content.kind === 'image' || content.kind === 'video' || content.kind === 'audio' || content.kind === 'document'
}

async function lidToPhone(socket: SocketLike, lid: string): Promise<string | undefined> {
  const pn = await socket.signalRepository?.lidMapping.getPNForLID(lid)
  return pn ? phoneOf(normalizeJid(pn)) : undefined
}
