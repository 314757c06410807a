import type { IncomingContent, IncomingMessage, TransportEvent } from '../../ports/transport.ts'
import type { Device } from '../devices.ts'

/** The spec's event names (the `event` field of every webhook body). */
export type WebhookEventName =
  'Texto' | 'Imagem' | 'Vídeo' | 'Áudio' | 'Documento' | 'Contato' | 'Localização' | 'Reação' | 'Deletada' | 'Botão' | 'Lista' | 'Falha'

/** Fields every webhook body carries (DESIGN.md decision 10), before the fields of its kind. */
interface WebhookEnvelope {
  event: WebhookEventName
  /** The network's message id: the value operation 14 (`markRead`) takes. */
  idMessagem: string
  /** The id of the device that saw the message. */
  device: string
  /** Where a reply goes: the other party's number (or LID) in 1:1 chats, the group id in groups. */
  chat: string
  /** The sender: phone digits, or the sender's LID when the network hides the number. */
  from: string
  /** The sender's LID (`<digits>@lid`), when the network gave one. */
  fromLid?: string
  /** The sender's display name, when the network gave one. */
  pushName?: string
  /** The recipient: the device's number, the other party's (fromMe), or the group id. */
  to: string
  fromMe: boolean
  isGroup: boolean
  /** The group id (`<digits>@g.us`), for group traffic only. */
  group?: string
  /** When the message was sent, in milliseconds since the epoch. */
  timestamp: number
}

/** A webhook body: the envelope plus the fields of its kind (see docs/api.md, "Webhooks"). */
export type WebhookPayload = WebhookEnvelope & Record<string, unknown>

/** Which switch of operation 20 governs a message: `chat` (1:1) or `group`. */
type WebhookChannel = 'chat' | 'group'

/** The event name of a message's content; undefined for a kind the gateway does not report. */
function eventName(content: IncomingContent): WebhookEventName | undefined {
  switch (content?.kind) {
    case 'text':
      return 'Texto'
    case 'image':
      return 'Imagem'
    case 'video':
      return 'Vídeo'
    case 'audio':
      return 'Áudio'
    case 'document':
      return 'Documento'
    case 'contact':
      return 'Contato'
    case 'location':
      return 'Localização'
    case 'reaction':
      return 'Reação'
    case 'delete':
      return 'Deletada'
    case 'button':
      return content.list ? 'Lista' : 'Botão'
    default:
      return undefined
  }
}

/** The webhook body of a message seen by `device`; undefined for a kind the gateway does not report. */
export function webhookPayload(device: Pick<Device, 'id'>, message: IncomingMessage): WebhookPayload | undefined {
  const event = eventName(message.content)
  if (!event) return undefined
  const envelope: WebhookEnvelope = {
    event,
    idMessagem: message.id,
    device: device.id,
    chat: message.chat,
    from: message.from ?? message.fromLid ?? message.chat,
    ...defined({ fromLid: message.fromLid, pushName: message.pushName }),
    to: message.to,
    fromMe: message.fromMe,
    isGroup: message.isGroup,
    ...defined({ group: message.isGroup ? (message.group ?? message.chat) : undefined }),
    timestamp: message.timestamp,
  }
  return { ...envelope, ...kindFields(message.content) }
}

/** A sent message the network reports as not delivered (the transport's `message-failed` event). */
export type MessageFailure = Extract<TransportEvent, { type: 'message-failed' }>

/**
 * The `Falha` webhook body: the envelope of the device's own message (`idMessagem` is the id the
 * send answered, `fromMe` true, `timestamp` when the network reported it), then `code` and `reason`.
 */
export function failurePayload(device: Pick<Device, 'id' | 'phone'>, failure: MessageFailure): WebhookPayload {
  const isGroup = failure.chat.endsWith('@g.us')
  const envelope: WebhookEnvelope = {
    event: 'Falha',
    idMessagem: failure.messageId,
    device: device.id,
    chat: failure.chat,
    from: device.phone ?? failure.chat,
    to: failure.chat,
    fromMe: true,
    isGroup,
    ...defined({ group: isGroup ? failure.chat : undefined }),
    timestamp: failure.timestamp,
  }
  return { ...envelope, ...defined({ code: failure.code }), reason: failure.reason }
}

/** A map link for coordinates (the `mapUrl` of `Localização`). */
function mapLink(latitude: number, longitude: number): string {
  return `https://www.google.com/maps?q=${latitude},${longitude}`
}

/** The switch of operation 20 that governs a message. */
export function channelOf(message: IncomingMessage): WebhookChannel {
  return message.isGroup ? 'group' : 'chat'
}

// --- Internal helpers ---

function kindFields(content: IncomingContent): Record<string, unknown> {
  switch (content.kind) {
    case 'text':
      return { text: content.text }
    case 'image':
    case 'video':
    case 'audio':
    case 'document':
      return defined({
        caption: content.caption,
        fileName: content.fileName,
        mimetype: content.mimetype,
        base64: content.base64,
        url: content.url,
        voiceNote: content.voiceNote ? true : undefined,
      })
    case 'contact':
      return { name: content.name, ...defined({ phone: content.phone, vcard: content.vcard }) }
    case 'location':
      return {
        latitude: content.latitude,
        longitude: content.longitude,
        ...defined({ name: content.name }),
        mapUrl: mapLink(content.latitude, content.longitude),
      }
    case 'reaction':
      return { emoji: content.emoji, removed: content.emoji === '', target: content.target }
    case 'delete':
      return { target: content.target }
    case 'button':
      return { buttonId: content.buttonId, ...defined({ text: content.text, target: content.target }) }
  }
}

/** The object without its undefined fields (so bodies never carry `key: null` for absent facts). */
function defined(object: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined))
}
