import { Buffer } from 'node:buffer'
import { TransportError } from 'zapgate'
import type { Button, IncomingContent, MediaPayload, OutgoingMessage } from 'zapgate'
import { parsePhone } from './addresses.ts'
import type { InboxContent, PhoneMessage } from './types.ts'

/** A message as it travels: what the receiving phone's inbox shows, and what a receiving device sees. */
export interface Content {
  inbox: InboxContent
  incoming: IncomingContent
}

/** The content of a device's send (reaction and delete targets already resolved to an id). */
export function deviceContent(message: OutgoingMessage, inlineMediaBytes: number): Content {
  if (!message || typeof message !== 'object') invalid('a message must be an object')
  switch (message.kind) {
    case 'text':
      return pair({ type: 'text', text: str(message.text, 'text') }, { kind: 'text', text: message.text })
    case 'media': {
      const file = media(message.file)
      const caption = optionalStr(message.caption, 'caption')
      const voiceNote = message.media === 'audio' && message.voiceNote ? true : undefined
      const described = clean({ caption, fileName: file.fileName, mimetype: file.mimetype })
      const base64 = file.data.length <= inlineMediaBytes ? file.data.toString('base64') : undefined
      return pair(
        { type: mediaKind(message.media), ...described, bytes: file.data.length, ...clean({ voiceNote }) },
        { kind: message.media, ...described, ...clean({ base64, voiceNote }) },
      )
    }
    case 'contact':
      return contact(message.name, message.phone)
    case 'location':
      return location(message.latitude, message.longitude, message.text)
    case 'reaction':
      return reaction(message.target.id, message.emoji)
    case 'delete':
      return pair({ type: 'delete', target: message.target.id }, { kind: 'delete', target: message.target.id })
    case 'buttons': {
      const text = str(message.text, 'text')
      const extra = clean({ header: optionalStr(message.header, 'header'), footer: optionalStr(message.footer, 'footer') })
      return pair({ type: 'buttons', text, ...extra, buttons: buttons(message.buttons) }, { kind: 'text', text })
    }
    case 'carousel': {
      const text = str(message.text, 'text')
      if (!Array.isArray(message.cards) || message.cards.length === 0 || message.cards.length > 10) invalid('a carousel has 1 to 10 cards')
      const cards = message.cards.map(card => {
        const image = media(card.image)
        return {
          title: str(card.title, 'card title'),
          ...clean({ subtitle: optionalStr(card.subtitle, 'subtitle'), description: optionalStr(card.description, 'description') }),
          image: { mimetype: image.mimetype, ...clean({ fileName: image.fileName }), bytes: image.data.length },
          buttons: buttons(card.buttons),
        }
      })
      return pair({ type: 'carousel', text, ...clean({ footer: optionalStr(message.footer, 'footer') }), cards }, { kind: 'text', text })
    }
    default:
      return invalid(`unknown message kind ${(message as { kind?: unknown }).kind}`)
  }
}

/** The content of a simulated phone's send. */
export function phoneContent(message: PhoneMessage): Content {
  if (!message || typeof message !== 'object') invalid('a message must be an object')
  switch (message.type) {
    case 'text':
      return pair({ type: 'text', text: str(message.text, 'text') }, { kind: 'text', text: message.text })
    case 'image':
    case 'video':
    case 'audio':
    case 'document': {
      const described = clean({
        caption: optionalStr(message.caption, 'caption'),
        fileName: optionalStr(message.fileName, 'fileName'),
        mimetype: optionalStr(message.mimetype, 'mimetype'),
      })
      const voiceNote = message.type === 'audio' && message.voiceNote ? true : undefined
      let bytes: number | undefined
      if (message.base64 !== undefined) {
        if (typeof message.base64 !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(message.base64)) invalid('base64 is not base64')
        bytes = Buffer.from(message.base64, 'base64').length
      }
      return pair(
        { type: message.type, ...described, ...clean({ bytes, voiceNote }) },
        { kind: message.type, ...described, ...clean({ base64: message.base64, voiceNote }) },
      )
    }
    case 'contact':
      return contact(message.name, message.phone)
    case 'location':
      return location(message.latitude, message.longitude, message.text ?? message.name)
    case 'reaction':
      return reaction(message.target, message.emoji)
    case 'delete':
      return pair({ type: 'delete', target: message.target }, { kind: 'delete', target: message.target })
    case 'button': {
      const fields = { target: message.target, buttonId: str(message.buttonId, 'buttonId') }
      const extra = clean({ text: optionalStr(message.text, 'text'), list: message.list ? true : undefined })
      return pair({ type: 'button', ...fields, ...extra }, { kind: 'button', ...fields, ...extra })
    }
    default:
      return invalid(`unknown message type ${(message as { type?: unknown }).type}`)
  }
}

/** Throw the network's refusal of some content. */
export function invalid(message: string): never {
  throw new TransportError('invalid', message)
}

// --- Internal helpers ---

function pair(inbox: InboxContent, incoming: IncomingContent): Content {
  return { inbox, incoming }
}

function contact(name: string, phone: string): Content {
  const number = parsePhone(phone)
  if (!number) invalid('contact phone must be a phone number')
  const fn = str(name, 'contact name')
  const vcard = `BEGIN:VCARD\nVERSION:3.0\nFN:${vcardText(fn)}\nTEL;type=CELL;waid=${number}:+${number}\nEND:VCARD`
  return pair({ type: 'contact', name: fn, phone: number }, { kind: 'contact', name: fn, phone: number, vcard })
}

/** A vCard text value: a backslash, `,` and `;` escaped with a backslash, any line break (a lone CR too) written `\n`, so no text of a name starts a line of its own (as the Baileys adapter writes it). */
function vcardText(value: string): string {
  return value
    .replace(/\\/g, '\\\\')
    .replace(/[,;]/g, m => `\\${m}`)
    .replace(/\r\n|[\r\n\u0085\u2028\u2029]/g, '\\n')
}

function location(latitude: number, longitude: number, text?: string): Content {
  if (!Number.isFinite(latitude) || Math.abs(latitude) > 90) invalid('latitude must be between -90 and 90')
  if (!Number.isFinite(longitude) || Math.abs(longitude) > 180) invalid('longitude must be between -180 and 180')
  const name = optionalStr(text, 'text')
  return pair({ type: 'location', latitude, longitude, ...clean({ text: name }) }, { kind: 'location', latitude, longitude, ...clean({ name }) })
}

function reaction(target: string, emoji: string): Content {
  if (typeof emoji !== 'string' || emoji.length > 32) invalid('emoji must be a short string')
  return pair({ type: 'reaction', target, emoji }, { kind: 'reaction', target, emoji })
}

function media(file: MediaPayload): MediaPayload {
  if (!file || !Buffer.isBuffer(file.data)) invalid('media data must be a Buffer')
  str(file.mimetype, 'mimetype')
  return { data: file.data, mimetype: file.mimetype, ...clean({ fileName: optionalStr(file.fileName, 'fileName') }) }
}

function mediaKind(kind: string): 'image' | 'video' | 'audio' | 'document' {
  if (kind === 'image' || kind === 'video' || kind === 'audio' || kind === 'document') return kind
  return invalid(`unknown media kind ${kind}`)
}

function buttons(list: Button[]): Button[] {
  if (!Array.isArray(list) || list.length === 0 || list.length > 10) invalid('a message has 1 to 10 buttons')
  return list.map(button => {
    const text = str(button?.text, 'button text')
    if (button.type === 'reply') return { type: 'reply', id: str(button.id, 'button id'), text }
    if (button.type === 'url') return { type: 'url', text, url: str(button.url, 'button url') }
    if (button.type === 'call') return { type: 'call', text, phone: str(button.phone, 'button phone') }
    return invalid(`unknown button type ${(button as { type?: unknown }).type}`)
  })
}

function str(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '') invalid(`${name} must be a non-empty string`)
  return value
}

function optionalStr(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined
  return str(value, name)
}

/** The object without its undefined fields (so inbox entries never carry `key: undefined`). */
function clean<T extends Record<string, unknown>>(object: T): Partial<T> {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined)) as Partial<T>
}
