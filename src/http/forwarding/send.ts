import { randomBytes } from 'node:crypto'
import { basename } from 'node:path'
import type { Context } from 'koa'
import { GatewayError } from '../../errors.ts'
import type { UploadedFile } from '../../operations/operation.ts'
import type { IncomingHttpHeaders } from 'node:http'
import { ForwardHeaders, signForward } from './signature.ts'
import { AnswerTimeoutError, AnswerTooLargeError, postOnce, prefixOf } from './client.ts'
import { HOLDER_HEADER } from '../../client-api.ts'

export { ForwardHeaders, signForward, verifyForward, type ForwardVerdict } from './signature.ts'
export { forwardedRequestReader, forwardedBodyLimit, type ForwardedFrom } from './receive.ts'

/** How long a forward may take by default: longer than a media download plus a send's own time-outs. */
export const DEFAULT_FORWARD_TIMEOUT_MS = 120_000

/**
 * Marks an answer of an instance forwarded a request for a device it does not hold (held elsewhere,
 * or it stands fenced): refused before anything ran, so a forwarder that went by a remembered holder
 * may ask the store and forward once more (to-holder.ts). Never relayed to the client.
 */
export const NOT_HOLDER_HEADER = 'x-zapgate-not-holder'

/** The holder's answers beyond this size are refused (answers are small JSON; lists are bounded). */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024

/** What forwardOperation sends: to the holder (`baseUrl`, its advertised URL; `to`, its id) from this instance (`from`). */
export interface ForwardRequest {
  baseUrl: string
  /** The operation's path (`/api/create-message`). */
  path: string
  fields: Record<string, unknown>
  /** The files of a multipart body, by field name. */
  uploads?: ReadonlyMap<string, UploadedFile>
  secret: string | Buffer
  from: string
  to: string
  /** Default DEFAULT_FORWARD_TIMEOUT_MS. */
  timeoutMs?: number
  /** The client's IP (the holder's per-IP limits) and the public URL it called (links the holder makes). */
  clientIp?: string
  clientBaseUrl?: string
}

/** The holder's answer: its status, the headers relayed (`retry-after`, `content-type`, the holder hint), its parsed JSON body and that JSON's text. */
export interface ForwardAnswer {
  status: number
  headers: Record<string, string>
  body: unknown
  text?: string
  /** Refused by an instance that does not hold the device, before anything ran (NOT_HOLDER_HEADER). */
  notHolder?: boolean
}

/** Why a forward failed: the holder could not be reached, broke off, timed out, or answered non-JSON. */
export type ForwardFailure = 'unreachable' | 'broken' | 'timeout' | 'bad-answer'

/** A forward that got no usable answer from the holder; answered 503 with Retry-After (`holder-unavailable`). */
export class ForwardFailedError extends GatewayError {
  constructor(
    readonly reason: ForwardFailure,
    cause?: unknown,
  ) {
    super('holder-unavailable', { cause })
    this.name = 'ForwardFailedError'
    this.message = `forward failed (${reason})`
  }
}

/**
 * POST an operation's fields as JSON to the same path on the holder, signed with the cluster secret
 * (signature.ts; uploads as base64 data URIs in their fields); resolves with its answer, or throws
 * ForwardFailedError (no usable answer: `holder-unavailable`, 503 with Retry-After). Never retried:
 * a send must reach the network once, and a request that died mid-way may have been done.
 */
export async function forwardOperation(request: ForwardRequest): Promise<ForwardAnswer> {
  const body = Buffer.from(JSON.stringify(forwardableFields(request.fields, request.uploads)), 'utf8')
  const headers = signedHeaders(request, prefixOf(request.baseUrl) + request.path, body)
  let answer: Awaited<ReturnType<typeof postOnce>>
  try {
    // One request, to the holder only, on a kept-alive connection; never resent.
    answer = await postOnce(request.baseUrl, request.path, headers, body, request.timeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS, MAX_ANSWER_BYTES)
  } catch (cause) {
    if (cause instanceof AnswerTooLargeError) throw new ForwardFailedError('bad-answer', cause)
    throw new ForwardFailedError(cause instanceof AnswerTimeoutError ? 'timeout' : connectionFailure(cause), cause)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(answer.text)
  } catch (cause) {
    throw new ForwardFailedError('bad-answer', cause)
  }
  if (parsed === null || typeof parsed !== 'object') throw new ForwardFailedError('bad-answer')
  return {
    status: answer.status,
    headers: relayedHeaders(answer.headers),
    body: parsed,
    text: answer.text,
    notHolder: answer.headers[NOT_HOLDER_HEADER] === '1',
  }
}

/**
 * The body fields as forwarded: each upload a base64 data URI in its field; the upload of `file`
 * (operation 9's) also gives `message` its file name when the body has none, as the holder would have.
 */
export function forwardableFields(fields: Record<string, unknown>, uploads?: ReadonlyMap<string, UploadedFile>): Record<string, unknown> {
  if (!uploads || uploads.size === 0) return fields
  const out: Record<string, unknown> = { ...fields }
  for (const [name, upload] of uploads) {
    out[name] = dataUri(upload)
    const fileName = name === 'file' ? displayName(upload.fileName) : undefined
    if (fileName && (out.message === undefined || out.message === null || out.message === '')) out.message = fileName
  }
  return out
}

/** Answer the client with the holder's answer as the holder gave it (status, relayed headers, its JSON text, not serialised again). */
export function relayAnswer(ctx: Context, answer: ForwardAnswer): void {
  ctx.status = answer.status
  for (const name in answer.headers) ctx.set(name, answer.headers[name]!)
  if (answer.text === undefined) return void (ctx.body = answer.body)
  if (answer.headers['content-type'] === undefined) ctx.set('Content-Type', 'application/json; charset=utf-8')
  ctx.body = answer.text
}

// --- Internal helpers ---

/** Nonces: this process's random prefix and a counter (unique per forward; a nonce need not be unpredictable, the HMAC covers it). */
const NONCE_PREFIX = randomBytes(9).toString('base64url')
let nonces = 0

function signedHeaders(request: ForwardRequest, path: string, body: Buffer): Record<string, string> {
  const signed = {
    method: 'POST',
    path,
    timestamp: Date.now(),
    nonce: `${NONCE_PREFIX}${(++nonces).toString(36)}`,
    from: request.from,
    to: request.to,
    clientIp: request.clientIp ?? '',
    baseUrl: request.clientBaseUrl ?? '',
    body,
  }
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    [ForwardHeaders.forwardedBy]: signed.from,
    [ForwardHeaders.forwardedTo]: signed.to,
    [ForwardHeaders.timestamp]: String(signed.timestamp),
    [ForwardHeaders.nonce]: signed.nonce,
    [ForwardHeaders.signature]: signForward(request.secret, signed),
  }
  if (signed.clientIp) headers[ForwardHeaders.clientIp] = signed.clientIp
  if (signed.baseUrl) headers[ForwardHeaders.baseUrl] = signed.baseUrl
  return headers
}

/** An upload as a data URI: its declared type when a plain `type/subtype` (the media loader ignores anything else). */
function dataUri(upload: UploadedFile): string {
  const mime = upload.mimetype?.split(';')[0]!.trim().toLowerCase()
  const usable = mime && /^[a-z0-9.+-]+\/[a-z0-9.+-]+$/.test(mime) ? mime : ''
  return `data:${usable};base64,${upload.data.toString('base64')}`
}

/** The file name as the media loader keeps it: the last path segment, no control characters, at most 200 characters. */
function displayName(name: string | undefined): string | undefined {
  if (!name) return undefined
  const base = basename(name.replace(/\\/g, '/'))
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim()
    .slice(0, 200)
    .trim()
  return base && base !== '.' && base !== '..' ? base : undefined
}

/** Whether the holder could not be reached at all (nothing was sent) or the connection broke off. */
function connectionFailure(cause: unknown): ForwardFailure {
  const code = (cause as { code?: string })?.code
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'EAI_AGAIN' ? 'unreachable' : 'broken'
}

function relayedHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const relayed: Record<string, string> = {}
  for (const name of ['retry-after', 'content-type', HOLDER_HEADER] as const) {
    const value = headers[name]
    if (typeof value === 'string') relayed[name] = value
  }
  return relayed
}
