import type { proto, WAMessage } from '@whiskeysockets/baileys'
import type { IncomingContent, IncomingMessage, MediaKind, SharedContact } from 'zapgate'
import { isGroupJid, isLidJid, isPnJid, normalizeJid, phoneOf } from './jid.ts'
import type { BaileysModule } from './types.ts'

/** The linked account, to fill `from`/`to` of messages. */
interface SelfIdentity {
  phone?: string
  lid?: string
}

/** Finds the phone number (digits) of a LID the socket has seen, when it knows one. */
type LidLookup = (lid: string) => Promise<string | undefined>

/**
 * The gateway's view of a message's content, or undefined for what the gateway does not report
 * (stickers, polls, edits, protocol messages other than a revoke, key distribution only, statuses
 * posted to a group, ...). Wrappers (ephemeral, view once, document with caption, edited) are
 * unwrapped first. Buttons, lists and templates another client sent are their text. Media carries no bytes yet (see receive.ts).
 */
export function classifyContent(lib: BaileysModule, message: WAMessage): IncomingContent | undefined {
  if (isGroupStatus(message.message)) return undefined
  const c = lib.normalizeMessageContent(message.message)
  if (!c) return undefined
  switch (lib.getContentType(c)) {
    case 'conversation':
      return { kind: 'text', text: c.conversation ?? '' }
    case 'extendedTextMessage':
      return { kind: 'text', text: c.extendedTextMessage?.text ?? '' }
    case 'imageMessage':
      return media('image', c.imageMessage!, { caption: c.imageMessage!.caption })
    case 'videoMessage':
      return media('video', c.videoMessage!, { caption: c.videoMessage!.caption })
    case 'ptvMessage':
      return media('video', c.ptvMessage!, { caption: c.ptvMessage!.caption })
    case 'audioMessage':
      return media('audio', c.audioMessage!, { voiceNote: c.audioMessage!.ptt ? true : undefined })
    case 'documentMessage':
      return media('document', c.documentMessage!, { caption: c.documentMessage!.caption, fileName: c.documentMessage!.fileName })
    case 'contactMessage':
      return contact(c.contactMessage!)
    case 'contactsArrayMessage': {
      const cards = (c.contactsArrayMessage!.contacts ?? []).map(contact)
      return cards.length > 1 ? { ...cards[0]!, contacts: cards.map(({ name, phone, vcard }) => clean({ name, phone, vcard }) as SharedContact) } : cards[0]
    }
    case 'locationMessage':
      return location(c.locationMessage!.degreesLatitude, c.locationMessage!.degreesLongitude, c.locationMessage!.name ?? c.locationMessage!.address)
    case 'liveLocationMessage':
      return location(c.liveLocationMessage!.degreesLatitude, c.liveLocationMessage!.degreesLongitude, c.liveLocationMessage!.caption)
    case 'interactiveMessage':
    case 'buttonsMessage':
    case 'listMessage':
    case 'templateMessage': {
      const text = offeredText(c)
      return text ? { kind: 'text', text } : undefined
    }
    case 'reactionMessage': {
      const target = c.reactionMessage!.key?.id
      return target ? { kind: 'reaction', target, emoji: c.reactionMessage!.text ?? '' } : undefined
    }
    case 'protocolMessage': {
      const protocol = c.protocolMessage!
      const target = protocol.key?.id
      const revoke = (protocol.type ?? lib.proto.Message.ProtocolMessage.Type.REVOKE) === lib.proto.Message.ProtocolMessage.Type.REVOKE
      return revoke && target ? { kind: 'delete', target } : undefined
    }
    case 'buttonsResponseMessage': {
      const reply = c.buttonsResponseMessage!
      return button(reply.selectedButtonId, reply.selectedDisplayText, reply.contextInfo, false)
    }
    case 'templateButtonReplyMessage': {
      const reply = c.templateButtonReplyMessage!
      return button(reply.selectedId, reply.selectedDisplayText, reply.contextInfo, false)
    }
    case 'listResponseMessage': {
      const reply = c.listResponseMessage!
      return button(reply.singleSelectReply?.selectedRowId, reply.title, reply.contextInfo, true)
    }
    case 'interactiveResponseMessage': {
      const reply = c.interactiveResponseMessage!
      const flow = reply.nativeFlowResponseMessage
      const params = parseJson(flow?.paramsJson)
      const id = typeof params.id === 'string' ? params.id : undefined
      return button(id, reply.body?.text, reply.contextInfo, flow?.name === 'single_select')
    }
    default:
      return undefined
  }
}

/** The size in bytes a media message announces, when it does. */
export function announcedSize(lib: BaileysModule, message: WAMessage): number | undefined {
  const c = lib.normalizeMessageContent(message.message)
  const type = c && lib.getContentType(c)
  const inner = type ? (c[type] as { fileLength?: unknown } | undefined) : undefined
  const size = inner?.fileLength == null ? undefined : Number(inner.fileLength)
  return size !== undefined && Number.isFinite(size) && size > 0 ? size : undefined
}

/**
 * The envelope of a message: chat, sender and recipient as the gateway names them. 1:1 chats are named
 * by the other party's phone (digits) when known, else by their LID; groups by the group id. A LID
 * sender's phone comes from the key's alternate id (`remoteJidAlt`/`participantAlt`) or the socket's
 * LID mappings.
 */
export async function describeMessage(message: WAMessage, content: IncomingContent, self: SelfIdentity, lookup: LidLookup): Promise<IncomingMessage> {
  const key = message.key
  const remoteJid = normalizeJid(key.remoteJid!)
  const fromMe = Boolean(key.fromMe)
  const seconds = Number(message.messageTimestamp ?? 0)
  const common = { id: key.id!, fromMe, timestamp: seconds > 0 ? seconds * 1000 : Date.now(), content }
  const pushName = !fromMe && message.pushName ? { pushName: message.pushName } : {}
  const ownAddress = self.phone ?? self.lid ?? ''
  if (isGroupJid(remoteJid)) {
    const sender = fromMe ? self : await identify(key.participant ?? undefined, key.participantAlt, lookup)
    return { ...common, chat: remoteJid, to: remoteJid, isGroup: true, group: remoteJid, ...identity(sender), ...pushName }
  }
  const alt = fromMe && isSelf(key.remoteJidAlt, self) ? undefined : key.remoteJidAlt
  const other = await identify(remoteJid, alt, lookup)
  const otherAddress = other.phone ?? other.lid ?? remoteJid
  if (fromMe) return { ...common, chat: otherAddress, to: otherAddress, isGroup: false, ...identity(self) }
  return { ...common, chat: otherAddress, to: ownAddress, isGroup: false, ...identity(other), ...pushName }
}

// --- Internal helpers ---

/** The wrappers Baileys 7.0.0-rc14's normalizeMessageContent unwraps besides a group status's. */
const WRAPPERS = [
  'ephemeralMessage',
  'viewOnceMessage',
  'documentWithCaptionMessage',
  'viewOnceMessageV2',
  'viewOnceMessageV2Extension',
  'editedMessage',
  'associatedChildMessage',
] as const

/**
 * Whether a message is a status posted to a group (`groupStatusMessage`/`V2`, in the group's chat, not
 * `status@broadcast`), at any depth of wrappers: normalizeMessageContent unwraps it as it unwraps an
 * ephemeral message, and its content would be reported as an ordinary group message.
 */
function isGroupStatus(message: proto.IMessage | null | undefined): boolean {
  for (let depth = 0, m = message; m && depth < 5; depth++) {
    if (m.groupStatusMessage || m.groupStatusMessageV2) return true
    m = WRAPPERS.map(wrapper => m![wrapper]).find(Boolean)?.message
  }
  return false
}

/** The text of buttons, a list or a template another client (a bot) sent: what the phone shows above its buttons or list. */
function offeredText(c: proto.IMessage): string | null | undefined {
  return (
    c.interactiveMessage?.body?.text || c.buttonsMessage?.contentText || c.listMessage?.description || c.templateMessage?.hydratedTemplate?.hydratedContentText
  )
}

function media(
  kind: MediaKind,
  message: { mimetype?: string | null },
  extra: { caption?: string | null; fileName?: string | null; voiceNote?: boolean },
): IncomingContent {
  return clean({ kind, mimetype: message.mimetype, caption: extra.caption, fileName: extra.fileName, voiceNote: extra.voiceNote }) as IncomingContent
}

/**
 * A card's name and phone: the `waid` of a TEL line (only there: a name may say `waid=` too), else a
 * TEL line's number.
 */
function contact(card: proto.Message.IContactMessage): Extract<IncomingContent, { kind: 'contact' }> {
  const vcard = card.vcard ?? undefined
  const phone = vcard
    ? (/^(?:[\w-]+\.)?TEL[^:\r\n]*waid=(\d+)/im.exec(vcard)?.[1] ?? /^(?:[\w-]+\.)?TEL[^:]*:([+\d\s\-().]+)$/im.exec(vcard)?.[1]?.replace(/\D/g, ''))
    : undefined
  const name = card.displayName ?? (vcard ? /^FN:(.*)$/im.exec(vcard)?.[1]?.trim() : undefined) ?? ''
  return clean({ kind: 'contact', name, phone: phone || undefined, vcard }) as Extract<IncomingContent, { kind: 'contact' }>
}

function location(latitude: number | null | undefined, longitude: number | null | undefined, name: string | null | undefined): IncomingContent {
  return clean({ kind: 'location', latitude: latitude ?? 0, longitude: longitude ?? 0, name }) as IncomingContent
}

function button(
  id: string | null | undefined,
  text: string | null | undefined,
  context: proto.IContextInfo | null | undefined,
  list: boolean,
): IncomingContent | undefined {
  if (!id) return undefined
  return clean({ kind: 'button', target: context?.stanzaId, buttonId: id, text, list }) as IncomingContent
}

async function identify(jid: string | undefined, alt: string | null | undefined, lookup: LidLookup): Promise<SelfIdentity> {
  if (!jid) return {}
  if (isPnJid(jid)) return clean({ phone: phoneOf(jid), lid: isLidJid(alt) ? normalizeJid(alt) : undefined })
  if (isLidJid(jid)) {
    const lid = normalizeJid(jid)
    return clean({ lid, phone: phoneOf(alt) ?? (await lookup(lid).catch(() => undefined)) })
  }
  return {}
}

function identity(who: SelfIdentity): { from?: string; fromLid?: string } {
  return clean({ from: who.phone, fromLid: who.lid })
}

function isSelf(jid: string | null | undefined, self: SelfIdentity): boolean {
  if (!jid) return false
  return (self.phone !== undefined && phoneOf(jid) === self.phone) || (self.lid !== undefined && normalizeJid(jid) === self.lid)
}

function parseJson(text: string | null | undefined): Record<string, unknown> {
  try {
    const value = text ? JSON.parse(text) : {}
    return value && typeof value === 'object' ? value : {}
  } catch {
    return {}
  }
}

/** The object without its undefined and null members. */
function clean<T extends object>(value: T): { [K in keyof T]: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== null)) as { [K in keyof T]: Exclude<T[K], null> }
}
