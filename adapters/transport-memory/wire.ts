import { TransportError } from 'zapgate'
import type { Card, IncomingMessage, MediaPayload, OutgoingMessage } from 'zapgate'

/**
 * The simulator server's device protocol (docs/simulator.md): the frames a device connection
 * streams to the gateway (one JSON object a line), and the JSON forms of what crosses the wire.
 */

/** A frame of a device's stream (server to gateway). Frames with `seq` wait for the gateway's ack. */
export type Frame =
  /** First frame of a link stream: the link is pending; `connection` names the stream for acks. */
  | { type: 'linking'; connection: string }
  /** A phone completed the link: keep these credentials, connect with them, then ack. */
  | { type: 'linked'; seq: number; phone: string; secret: string }
  /** First frame of a device connection: it is open; ack it once the open state is announced (queued messages follow). */
  | { type: 'open'; connection: string; seq: number; lid?: string }
  | { type: 'message'; seq: number; message: IncomingMessage }
  /** The last frame: the connection (or pending link) ended for this reason. */
  | { type: 'closed'; state: 'replaced' | 'logged-out' | 'closed'; reason: string }
  | { type: 'ping' }

/** The gateway's answer to a frame with `seq`: done, or failed with a TransportError. */
export interface Ack {
  seq: number
  error?: { code: TransportError['code']; message: string }
}

/** The content type of device streams. */
export const STREAM_TYPE = 'application/x-ndjson'

/** How often the server writes a ping on an idle stream; a gateway that hears nothing for 3 of them drops the stream. */
export const PING_MS = 15_000

/** An outgoing message as JSON: media bytes as base64. */
export function encodeOutgoing(message: OutgoingMessage): unknown {
  if (message.kind === 'media') return { ...message, file: encodeMedia(message.file) }
  if (message.kind === 'carousel') return { ...message, cards: message.cards.map(card => ({ ...card, image: encodeMedia(card.image) })) }
  return message
}

/** An outgoing message from its JSON form (the network checks the rest). */
export function decodeOutgoing(json: unknown): OutgoingMessage {
  const message = json as OutgoingMessage
  if (message?.kind === 'media') return { ...message, file: decodeMedia(message.file) }
  if (message?.kind === 'carousel' && Array.isArray(message.cards)) {
    return { ...message, cards: message.cards.map((card: Card) => ({ ...card, image: decodeMedia(card?.image) })) }
  }
  return message
}

/** The HTTP status of a TransportError code (simulator answers). */
export const TRANSPORT_STATUS: Record<TransportError['code'], number> = {
  'not-connected': 409,
  'already-connected': 409,
  'not-found': 404,
  'not-admin': 403,
  'rate-limited': 429,
  timeout: 504,
  unreachable: 503,
  invalid: 400,
  failed: 502,
}

/** The TransportError an answer `{code, message}` of the simulator server stands for. */
export function errorOfAnswer(status: number, body: unknown): TransportError {
  const { code, message } = (body ?? {}) as { code?: unknown; message?: unknown }
  const text = typeof message === 'string' ? message : `the simulator answered HTTP ${status}`
  if (typeof code === 'string' && code in TRANSPORT_STATUS) return new TransportError(code as TransportError['code'], text)
  // The simulator names a code in every answer of its own: without one, something else answered.
  return new TransportError('failed', text)
}

// --- Internal helpers ---

function encodeMedia(file: MediaPayload): unknown {
  return { ...file, data: Buffer.isBuffer(file?.data) ? file.data.toString('base64') : file?.data }
}

function decodeMedia(file: unknown): MediaPayload {
  const media = file as { data?: unknown; mimetype: string; fileName?: string }
  return { ...media, data: typeof media?.data === 'string' ? Buffer.from(media.data, 'base64') : (media?.data as Buffer) }
}
