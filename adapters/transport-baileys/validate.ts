import { TransportError } from 'zapgate'
import type { Button, Card, LinkRequest, MediaPayload, OutgoingMessage } from 'zapgate'
import { parsePhone } from './jid.ts'

/** Check a link request (a QR link, or a phone with its pairing code); the phone normalised, the code in capitals. */
export function linkRequest(request: LinkRequest): LinkRequest {
  if (!request || typeof request !== 'object') throw new TransportError('invalid', 'a link request must be an object')
  if ((request.phone === undefined) !== (request.code === undefined)) throw new TransportError('invalid', 'phone and code go together')
  if (request.phone === undefined) return {}
  const phone = typeof request.phone === 'string' ? parsePhone(request.phone) : undefined
  if (!phone) throw new TransportError('invalid', 'phone must be a phone number with its country code')
  if (typeof request.code !== 'string' || !/^[A-Za-z0-9]{8}$/.test(request.code)) throw new TransportError('invalid', 'a pairing code has 8 letters or digits')
  return { phone, code: request.code.toUpperCase() }
}

/** Check an outgoing message before anything reaches the network; TransportError('invalid') when it is malformed. */
export function validateOutgoing(message: OutgoingMessage): void {
  if (!message || typeof message !== 'object') invalid('a message must be an object')
  switch (message.kind) {
    case 'text':
      return void text(message.text, 'text')
    case 'media':
      if (!['image', 'video', 'audio', 'document'].includes(message.media)) invalid(`unknown media kind ${String(message.media)}`)
      optionalText(message.caption, 'caption')
      return void media(message.file)
    case 'contact':
      text(message.name, 'contact name')
      if (typeof message.phone !== 'string' || !parsePhone(message.phone)) invalid('contact phone must be a phone number')
      return
    case 'location':
      if (!Number.isFinite(message.latitude) || Math.abs(message.latitude) > 90) invalid('latitude must be between -90 and 90')
      if (!Number.isFinite(message.longitude) || Math.abs(message.longitude) > 180) invalid('longitude must be between -180 and 180')
      return void optionalText(message.text, 'location text')
    case 'reaction':
      target(message.target)
      if (typeof message.emoji !== 'string' || message.emoji.length > 32) invalid('emoji must be a short string')
      return
    case 'delete':
      return target(message.target)
    case 'buttons':
      text(message.text, 'text')
      optionalText(message.header, 'header')
      optionalText(message.footer, 'footer')
      return buttons(message.buttons)
    case 'carousel':
      text(message.text, 'text')
      optionalText(message.footer, 'footer')
      if (!Array.isArray(message.cards) || message.cards.length === 0 || message.cards.length > 10) invalid('a carousel has 1 to 10 cards')
      return message.cards.forEach(card)
    default:
      invalid(`unknown message kind ${String((message as { kind?: unknown }).kind)}`)
  }
}

/** Throw TransportError('invalid'). */
export function invalid(message: string): never {
  throw new TransportError('invalid', message)
}

// --- Internal helpers ---

function text(value: unknown, name: string): void {
  if (typeof value !== 'string' || value.trim() === '') invalid(`${name} must be a non-empty string`)
}

function optionalText(value: unknown, name: string): void {
  if (value !== undefined && typeof value !== 'string') invalid(`${name} must be a string`)
}

function media(file: MediaPayload): void {
  if (!file || !Buffer.isBuffer(file.data) || file.data.length === 0) invalid('media data must be a non-empty Buffer')
  if (typeof file.mimetype !== 'string' || !file.mimetype.includes('/')) invalid('media mimetype must be a MIME type')
  optionalText(file.fileName, 'file name')
}

function target(ref: { id?: unknown } | undefined): void {
  if (!ref || typeof ref.id !== 'string' || ref.id === '') invalid('target must name a message id')
}

function buttons(list: Button[]): void {
  if (!Array.isArray(list) || list.length === 0 || list.length > 10) invalid('a message has 1 to 10 buttons')
  for (const button of list) {
    text(button?.text, 'button text')
    if (button.type === 'reply') text(button.id, 'button id')
    else if (button.type === 'url') {
      if (typeof button.url !== 'string' || !/^https?:\/\/\S+$/i.test(button.url)) invalid('button url must be an http(s) URL')
    } else if (button.type === 'call') {
      if (typeof button.phone !== 'string' || !parsePhone(button.phone)) invalid('button phone must be a phone number')
    } else invalid(`unknown button type ${String((button as { type?: unknown }).type)}`)
  }
}

function card(value: Card): void {
  if (!value || typeof value !== 'object') invalid('a card must be an object')
  text(value.title, 'card title')
  optionalText(value.subtitle, 'card subtitle')
  optionalText(value.description, 'card description')
  media(value.image)
  if (!value.image.mimetype.startsWith('image/')) invalid('a card image must be an image')
  buttons(value.buttons)
}
