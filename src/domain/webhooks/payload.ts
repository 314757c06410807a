import type { IncomingContent, IncomingMessage, TransportEvent } from '../../ports/transport.ts'
import type { Device } from '../devices.ts'
import { cleanName } from '../messaging/media-loader.ts'

/** The spec's event names (the `event` field of every webhook body). */
export type WebhookEventName =
  'Texto' | 'Imagem' | 'Vídeo' | 'Áudio' | 'Documento' | 'Contato' | 'Localização' | 'Reação' | 'Deletada' | 'Botão' | 'Lista' | 'Falha'

/** Fields every webhook body carries, before the fields of its kind: each field is described in docs/api.md, "Webhooks". */
interface WebhookEnvelope {
  event: WebhookEventName
  idMessagem: string
  device: string
  chat: string
  from: string
  fromLid?: string
  pushName?: string
  to: string
  fromMe: boolean
  isGroup: boolean
  group?: string
  timestamp: number
}

/** A webhook body: the envelope plus the fields of its kind (see docs/api.md, "Webhooks"). */
export type WebhookPayload = WebhookEnvelope & Record<string, unknown>

/** A sent message the network reports as not delivered (the transport's `message-failed` event). */
export type MessageFailure = Extract<TransportEvent, { type: 'message-failed' }>

const EVENT_NAMES: Partial<Record<IncomingContent['kind'], WebhookEventName>> = {
  text: 'Texto',
  image: 'Imagem',
  video: 'Vídeo',
  audio: 'Áudio',
  document: 'Documento',
  contact: 'Contato',
  location: 'Localização',
  reaction: 'Reação',
  delete: 'Deletada',
}

/** The webhook body of a message seen by `device`; undefined for a kind the gateway does not report. */
export function webhookPayload(device: Pick<Device, 'id'>, message: IncomingMessage): WebhookPayload | undefined {
  const content = message.content
  const event = content?.kind === 'button' ? (content.list ? 'Lista' : 'Botão') : EVENT_NAMES[content?.kind]
  return event && { ...envelope(event, device, message), ...kindFields(content) }
}

/** The `Falha` body: the envelope of the device's own message (the id its send answered; `fromLid` the device's LID, `lid`, when its session knows it), then `code` and `reason`. */
export function failurePayload(device: Pick<Device, 'id' | 'phone'>, failure: MessageFailure, lid?: string): WebhookPayload {
  const { messageId: id, chat, timestamp } = failure
  const own = { id, chat, from: device.phone ?? chat, fromLid: lid, to: chat, fromMe: true, isGroup: chat.endsWith('@g.us'), timestamp }
  return { ...envelope('Falha', device, own), ...defined({ code: failure.code }), reason: failure.reason }
}

/**
 * The object without its undefined and null fields, so bodies never carry `key: null` for absent facts: not even from a transport that
 * gives null where its port says absent (one in JavaScript, or one passing a protobuf's `string | null` on; before, that null was POSTed).
 */
export function defined<T extends Record<string, unknown>>(object: T): Partial<T> {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined && value !== null)) as Partial<T>
}

// --- Internal helpers ---

function envelope(event: WebhookEventName, device: Pick<Device, 'id'>, message: Omit<IncomingMessage, 'content'>): WebhookEnvelope {
  return {
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
}

function kindFields(content: IncomingContent): Record<string, unknown> {
  switch (content.kind) {
    case 'text':
      return { text: content.text }
    case 'image':
    case 'video':
    case 'audio':
    case 'document':
      const { caption, mimetype, base64, url } = content
      // The sender's name cleaned as a sent one is (SECURITY.md, File names): no bidi control makes `invoice<U+202E>fdp.exe.pdf` show as invoiceexe.pdf, no path.
      return defined({ caption, fileName: cleanName(content.fileName), mimetype, base64, url, voiceNote: content.voiceNote ? true : undefined })
    case 'contact':
      return {
        name: content.name,
        ...defined({
          phone: content.phone,
          vcard: content.vcard,
          contacts: content.contacts?.map(card => ({ name: card.name, ...defined({ phone: card.phone, vcard: card.vcard }) })),
        }),
      }
    case 'location':
      const { latitude, longitude } = content
      return {
        latitude,
        longitude,
        ...defined({ name: content.name }),
        mapUrl: `https://www.google.com/maps?q=${plainDecimal(latitude)},${plainDecimal(longitude)}`,
      }
    case 'reaction':
      return { emoji: content.emoji, removed: content.emoji === '', target: content.target }
    case 'delete':
      return { target: content.target }
    case 'button':
      return { buttonId: content.buttonId, ...defined({ text: content.text, target: content.target }) }
  }
}

/** A number in plain decimals, as a map link needs them: JavaScript writes 1e-7 (under 1e-6) and 1e+21 in exponent notation. */
function plainDecimal(value: number): string {
  const text = String(value)
  const match = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text)
  if (!match) return text
  const [, sign, lead, rest = '', exponent] = match
  const power = Number(exponent)
  return power < 0 ? `${sign}0.${'0'.repeat(-power - 1)}${lead}${rest}` : `${sign}${lead}${rest}${'0'.repeat(power - rest.length)}`
}
