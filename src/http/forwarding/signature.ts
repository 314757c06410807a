import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'

/**
 * The HMAC that authenticates a request one gateway instance forwards to another (the holder of a
 * device's session), keyed by the cluster secret. The signature covers a canonical string, one
 * value a line (header values cannot hold a line break, so no value can pass for another):
 *
 *     zapgate-forward-v2
 *     <METHOD>
 *     <path and query, exactly as the receiver's Node server sees it (req.url)>
 *     <timestamp: Unix milliseconds>
 *     <nonce>
 *     <forwarding instance id>
 *     <destination instance id: the holder it was sent to>
 *     <client IP>          (empty when not sent)
 *     <client base URL>    (empty when not sent)
 *     <SHA-256 of the body bytes, hex>
 *
 * and is sent as base64url HMAC-SHA256 in `x-zapgate-signature`. It is over the body's bytes as
 * sent, not over a re-serialised object: the receiver hashes the bytes it read before parsing them,
 * so no JSON canonicalisation has to agree between the two sides (key order, number formats, escapes).
 *
 * The destination line binds a request to the one instance it was sent to: a copy captured on the
 * wire is refused by every other instance (one that took the device over after a handover too), so
 * the memory of accepted signatures a receiver keeps in its own process is enough to refuse every
 * replay (see forwarded-requests.ts). Instance ids are never reused (pid, start time, random bytes).
 */
export const ForwardHeaders = {
  /** The id of the instance that forwarded the request. */
  forwardedBy: 'x-zapgate-forwarded-by',
  /** The id of the instance it was forwarded to (the holder the forwarder chose). */
  forwardedTo: 'x-zapgate-forwarded-to',
  /** When it was signed (Unix milliseconds). */
  timestamp: 'x-zapgate-timestamp',
  /** A random value per forwarded request (two identical requests are still two). */
  nonce: 'x-zapgate-nonce',
  /** The client's IP as the forwarding instance saw it. */
  clientIp: 'x-zapgate-client-ip',
  /** The public URL the client called (links such as QR share pages are made from it). */
  baseUrl: 'x-zapgate-base-url',
  /** base64url HMAC-SHA256 of the canonical string. */
  signature: 'x-zapgate-signature',
} as const

/** What a forwarded request's signature covers (see ForwardHeaders). */
export interface ForwardSigned {
  method: string
  /** Path and query as sent on the request line (`/api/create-message`, `/gw/api/x?a=1`). */
  path: string
  /** Unix milliseconds. */
  timestamp: number
  body: Buffer | string
  nonce?: string
  /** The forwarding instance's id. */
  from?: string
  /** The destination instance's id. */
  to?: string
  clientIp?: string
  baseUrl?: string
}

/** A received request, as verifyForward reads it. */
interface ForwardedRequest {
  /** The id of the instance that received it: the signature must name it as the destination. */
  receiver: string
  method: string
  path: string
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>
  body: Buffer | string
}

/** Why a forwarded request was or was not accepted. */
export type ForwardVerdict = 'ok' | 'missing' | 'bad-signature' | 'stale' | 'wrong-destination'

/** How far a forwarded request's timestamp may be from the receiver's clock (either way). */
export const FORWARD_TOLERANCE_MS = 30_000

/** The base64url HMAC-SHA256 signature of a forwarded request (the `x-zapgate-signature` value). */
export function signForward(secret: string | Buffer, signed: ForwardSigned): string {
  return hmac(secret, signed).toString('base64url')
}

/**
 * Check a forwarded request: `missing` without a timestamp or signature header, `stale` when its
 * timestamp is further than `toleranceMs` from `now` (either way), `wrong-destination` when it was
 * sent to another instance than `request.receiver`, `bad-signature` when the HMAC does not match
 * (compared in constant time; it covers the destination too); else `ok`.
 */
export function verifyForward(secret: string | Buffer, request: ForwardedRequest, now = Date.now(), toleranceMs = FORWARD_TOLERANCE_MS): ForwardVerdict {
  const stamp = header(request.headers, ForwardHeaders.timestamp)
  const given = header(request.headers, ForwardHeaders.signature)
  if (stamp === undefined || given === undefined || stamp === '' || given === '') return 'missing'
  if (!/^\d{1,16}$/.test(stamp)) return 'bad-signature'
  const timestamp = Number(stamp)
  if (Math.abs(now - timestamp) > toleranceMs) return 'stale'
  if (request.receiver === '' || header(request.headers, ForwardHeaders.forwardedTo) !== request.receiver) return 'wrong-destination'
  const expected = hmac(secret, {
    method: request.method,
    path: request.path,
    timestamp,
    body: request.body,
    nonce: header(request.headers, ForwardHeaders.nonce),
    from: header(request.headers, ForwardHeaders.forwardedBy),
    to: request.receiver,
    clientIp: header(request.headers, ForwardHeaders.clientIp),
    baseUrl: header(request.headers, ForwardHeaders.baseUrl),
  })
  return sameBytes(Buffer.from(given, 'base64url'), expected) ? 'ok' : 'bad-signature'
}

/**
 * Whether two byte strings are equal, in time that depends only on their lengths: timingSafeEqual
 * throws on buffers of unequal length, and a signature's length is no secret (an HMAC-SHA256 is
 * always 32 bytes), so those are simply unequal.
 */
export function sameBytes(given: Buffer, expected: Buffer): boolean {
  return given.length === expected.length && timingSafeEqual(given, expected)
}

// --- Internal helpers ---

function hmac(secret: string | Buffer, signed: ForwardSigned): Buffer {
  if (secret.length === 0) throw new Error('the cluster secret is empty')
  const bodyHash = createHash('sha256').update(signed.body).digest('hex')
  const canonical = [
    'zapgate-forward-v2',
    signed.method.toUpperCase(),
    signed.path,
    String(signed.timestamp),
    signed.nonce ?? '',
    signed.from ?? '',
    signed.to ?? '',
    signed.clientIp ?? '',
    signed.baseUrl ?? '',
    bodyHash,
  ].join('\n')
  return createHmac('sha256', secret).update(canonical).digest()
}

/** One header's value (the first, when repeated). */
function header(headers: ForwardedRequest['headers'], name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}
