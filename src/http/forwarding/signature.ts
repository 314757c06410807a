import { createHmac, hash, timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'

/** The headers of a request one instance forwards to another; what the signature covers and why: docs/scaling.md, "Signature". */
export const ForwardHeaders = {
  forwardedBy: 'x-zapgate-forwarded-by',
  forwardedTo: 'x-zapgate-forwarded-to',
  timestamp: 'x-zapgate-timestamp',
  nonce: 'x-zapgate-nonce',
  clientIp: 'x-zapgate-client-ip',
  baseUrl: 'x-zapgate-base-url',
  signature: 'x-zapgate-signature',
} as const

/** What a forwarded request's signature covers (see ForwardHeaders). */
export interface ForwardSigned {
  method: string
  /** Path and query as sent on the request line (`/api/create-message`, `/gw/api/x?a=1`). */
  path: string
  timestamp: number
  /** The body's bytes, or (a body hashed as it streamed by, not kept) their hex SHA-256. */
  body: Buffer | string | { sha256: string }
  nonce?: string
  from?: string
  to?: string
  clientIp?: string
  baseUrl?: string
}

/** A received request, as verifyForward reads it; `receiver` is this instance's id, which the signature must name. */
type ForwardedRequest = Pick<ForwardSigned, 'method' | 'path' | 'body'> & { receiver: string; headers: IncomingHttpHeaders }

/** Why a forwarded request was or was not accepted. */
export type ForwardVerdict = 'ok' | 'missing' | 'bad-signature' | 'stale' | 'wrong-destination'

/** How far a forwarded request's timestamp may be from the receiver's clock (either way). */
export const FORWARD_TOLERANCE_MS = 30_000

/** The signed values a header carries beside the timestamp, in the order the signature covers them. */
const CARRIED = [
  ['nonce', ForwardHeaders.nonce],
  ['from', ForwardHeaders.forwardedBy],
  ['to', ForwardHeaders.forwardedTo],
  ['clientIp', ForwardHeaders.clientIp],
  ['baseUrl', ForwardHeaders.baseUrl],
] as const

/** The base64url HMAC-SHA256 signature of a forwarded request (the `x-zapgate-signature` value). */
export function signForward(secret: string | Buffer, signed: ForwardSigned): string {
  return hmac(secret, signed).toString('base64url')
}

/** The headers of a forwarded request: each signed value that is not empty, the timestamp and the signature. */
export function signedHeaders(secret: string | Buffer, signed: ForwardSigned): Record<string, string> {
  const headers: Record<string, string> = { [ForwardHeaders.timestamp]: String(signed.timestamp), [ForwardHeaders.signature]: signForward(secret, signed) }
  for (const [field, name] of CARRIED) if (signed[field]) headers[name] = signed[field]
  return headers
}

/** Check a forwarded request: `missing` signature, `stale` timestamp, `wrong-destination`, `bad-signature` (compared in constant time), or `ok`. */
export function verifyForward(secret: string | Buffer, request: ForwardedRequest, now = Date.now(), toleranceMs = FORWARD_TOLERANCE_MS): ForwardVerdict {
  const { headers } = request
  const stamp = header(headers, ForwardHeaders.timestamp)
  const given = header(headers, ForwardHeaders.signature)
  if (!stamp || !given) return 'missing'
  if (!/^\d{1,16}$/.test(stamp)) return 'bad-signature'
  const timestamp = Number(stamp)
  if (Math.abs(now - timestamp) > toleranceMs) return 'stale'
  if (request.receiver === '' || header(headers, ForwardHeaders.forwardedTo) !== request.receiver) return 'wrong-destination'
  const signed: ForwardSigned = { method: request.method, path: request.path, timestamp, body: request.body }
  for (const [field, name] of CARRIED) signed[field] = header(headers, name)
  const expected = hmac(secret, signed)
  return sameBytes(Buffer.from(given, 'base64url'), expected) ? 'ok' : 'bad-signature'
}

/** Whether two byte strings are equal, in time that depends only on their lengths (a signature's length is no secret). */
export function sameBytes(given: Buffer, expected: Buffer): boolean {
  return given.length === expected.length && timingSafeEqual(given, expected)
}

// --- Internal helpers ---

function hmac(secret: string | Buffer, signed: ForwardSigned): Buffer {
  if (secret.length === 0) throw new Error('the cluster secret is empty')
  const { body } = signed
  const bodyHash = typeof body === 'string' || Buffer.isBuffer(body) ? hash('sha256', body, 'hex') : body.sha256
  const canonical = [
    'zapgate-forward-v2',
    signed.method.toUpperCase(),
    signed.path,
    signed.timestamp,
    ...CARRIED.map(([field]) => signed[field] ?? ''),
    bodyHash,
  ].join('\n')
  return createHmac('sha256', secret).update(canonical).digest()
}

/** One header's value (Node joins a repeated header other than set-cookie into one text). */
function header(headers: ForwardedRequest['headers'], name: string): string | undefined {
  return headers[name] as string | undefined
}
