import type { MediaPayload, MessageRef, OutgoingMessage } from '../../ports/transport.ts'

/** Longest text message, in characters (code points): WhatsApp's own limit, what the API's `message` takes and an agent's reply may be. */
export const MAX_TEXT = 65_536

/** Something a send operation does on the network: send a message, or send a read receipt. */
export type Action = { kind: 'send'; to: string; message: OutgoingMessage } | { kind: 'read'; to: string; target: MessageRef }

/** An Action as JSON: media bytes as base64 (stored with a scheduled item). */
export type StoredAction = { kind: 'send'; to: string; message: unknown } | { kind: 'read'; to: string; target: MessageRef }

/** The Action as a JSON-safe value (Buffers become `{base64}`). */
export function encodeAction(action: Action): StoredAction {
  if (action.kind === 'read') return action
  const message = mapPayloads(action.message, p => ({ ...p, data: { base64: p.data.toString('base64') } as unknown as Buffer }))
  return { kind: 'send', to: action.to, message }
}

/** The Action back from its stored form. */
export function decodeAction(stored: StoredAction): Action {
  if (stored.kind === 'read') return stored
  const message = mapPayloads(stored.message as OutgoingMessage, p => ({ ...p, data: Buffer.from((p.data as unknown as { base64: string }).base64, 'base64') }))
  return { kind: 'send', to: stored.to, message }
}

/** The text a listing shows for an action (`message` of a scheduled item). */
export function describeAction(action: Action): string {
  if (action.kind === 'read') return action.target.id
  const message = action.message
  switch (message.kind) {
    case 'text':
      return message.text
    case 'media':
      return message.caption ?? message.file.fileName ?? message.media
    case 'contact':
      return message.name
    case 'location':
      return message.text ?? `${message.latitude},${message.longitude}`
    case 'reaction':
      return message.emoji
    case 'delete':
      return message.target.id
    case 'buttons':
    case 'carousel':
      return message.text
  }
}

/** A copy of the message with every media payload passed through `map`. */
function mapPayloads(message: OutgoingMessage, map: (payload: MediaPayload) => MediaPayload): OutgoingMessage {
  if (message.kind === 'media') return { ...message, file: map(message.file) }
  if (message.kind === 'carousel') return { ...message, cards: message.cards.map(card => ({ ...card, image: map(card.image) })) }
  return message
}
