import { uniqueTag } from '../../security/keys.ts'
import type { Agent } from 'undici'
import type { Context } from 'koa'
import { GatewayError } from '../../errors.ts'
import type { UploadedFile } from '../../operations/operation.ts'
import { signedHeaders } from './signature.ts'
import { cleanName } from '../../domain/messaging/media-loader.ts'
import { HOLDER_HEADER } from '../../client-api.ts'

/** How long a forward may take by default: longer than a media download plus a send's own time-outs. */
export const DEFAULT_FORWARD_TIMEOUT_MS = 120_000

/** Marks a forwarded request's answer from an instance that does not hold the device (nothing ran): the forwarder asks the store again (to-holder.ts). */
export const NOT_HOLDER_HEADER = 'x-zapgate-not-holder'

/** The holder's answer headers relayed to the client. */
const RELAYED_HEADERS = ['retry-after', 'content-type', HOLDER_HEADER]

/** The holder's answers beyond this size are refused. */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024

/** What forwardOperation sends: to the holder (`baseUrl`, its advertised URL; `to`, its id) from this instance (`from`); `raw`, a plain JSON body's bytes, sent as they came unless there are uploads. */
export interface ForwardRequest {
  baseUrl: string
  path: string
  fields: Record<string, unknown>
  uploads?: ReadonlyMap<string, UploadedFile>
  raw?: Buffer
  secret: string | Buffer
  from: string
  to: string
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
  text: string
  /** Refused by an instance that does not hold the device (NOT_HOLDER_HEADER). */
  notHolder?: boolean
}

/** Why a forward failed: the holder could not be reached, broke off, timed out, or answered non-JSON. */
type ForwardFailure = 'unreachable' | 'broken' | 'timeout' | 'bad-answer'

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

/** POST an operation's fields, signed, to the same path on the holder: its answer, or ForwardFailedError (never retried: it may have been done). */
export async function forwardOperation(request: ForwardRequest): Promise<ForwardAnswer> {
  const body = request.raw && !request.uploads?.size ? request.raw : Buffer.from(JSON.stringify(forwardableFields(request.fields, request.uploads)), 'utf8')
  const { origin, prefix } = targetOf(request.baseUrl)
  const path = prefix + request.path
  const nonce = uniqueTag() // unique per forward; a nonce need not be unpredictable, the HMAC covers it
  const { from, to, clientIp, clientBaseUrl: baseUrl } = request
  const headers = signedHeaders(request.secret, { method: 'POST', path, timestamp: Date.now(), nonce, from, to, clientIp, baseUrl, body })
  headers['content-type'] = 'application/json'
  const answer = await postOnce(origin, path, headers, body, request.timeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS)
  return holderAnswer(answer.status, answer.headers, answer.text)
}

/** A holder's answer as relayed: its status, the headers relayed, its JSON body (parsed from `text` unless given; not an object: `bad-answer`) and that text. */
export function holderAnswer(status: number, headers: Record<string, unknown>, text: string, body?: unknown): ForwardAnswer {
  try {
    body ??= JSON.parse(text)
  } catch (cause) {
    throw new ForwardFailedError('bad-answer', cause)
  }
  if (body === null || typeof body !== 'object') throw new ForwardFailedError('bad-answer')
  const relayed: Record<string, string> = {}
  for (const name of RELAYED_HEADERS) if (typeof headers[name] === 'string') relayed[name] = headers[name]
  return { status, headers: relayed, body, text, notHolder: headers[NOT_HOLDER_HEADER] === '1' }
}

/** The body fields as forwarded: each upload a base64 data URI in its field, `file`'s name in an empty `message` (as the holder would have). */
export function forwardableFields(fields: Record<string, unknown>, uploads?: ReadonlyMap<string, UploadedFile>): Record<string, unknown> {
  if (!uploads || uploads.size === 0) return fields
  const out: Record<string, unknown> = { ...fields }
  for (const [name, upload] of uploads) {
    // Its declared type when a plain `type/subtype` (the media loader ignores anything else).
    const mime = upload.mimetype?.split(';')[0]!.trim().toLowerCase()
    out[name] = `data:${mime && /^[a-z0-9.+-]+\/[a-z0-9.+-]+$/.test(mime) ? mime : ''};base64,${upload.data.toString('base64')}`
    const fileName = name === 'file' ? cleanName(upload.fileName) : undefined
    if (fileName && (out.message == null || (typeof out.message === 'string' && !cleanName(out.message)))) out.message = fileName // as the holder reads it
  }
  return out
}

/** Answer the client with the holder's answer as the holder gave it (status, relayed headers, its JSON text, not serialised again). */
export function relayAnswer(ctx: Context, answer: ForwardAnswer): void {
  ctx.status = answer.status
  for (const name in answer.headers) ctx.set(name, answer.headers[name]!)
  if (answer.headers['content-type'] === undefined) ctx.set('Content-Type', 'application/json; charset=utf-8')
  ctx.body = answer.text
}

// --- Internal helpers ---

/** Kept-alive connections to the other instances through undici, about half the CPU of `http.request` a forward (bench/README.md); idle ones dropped after 4 s, before the holder's own keep-alive time-out, so a forward never meets a closing connection. Loaded at the first forward: undici is 5 MB of heap a standalone gateway never needs. */
let dispatcher: Promise<Agent> | undefined
export const undiciAgent = () =>
  (dispatcher ??= import('undici').then(({ Agent }) => new Agent({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 4_000, maxResponseSize: MAX_ANSWER_BYTES })))

/** The instances' base URLs as origin and path prefix (their mount point), parsed once each. */
const targets = new Map<string, { origin: string; prefix: string }>()

export function targetOf(baseUrl: string) {
  let target = targets.get(baseUrl)
  if (target) return target
  const url = new URL(baseUrl)
  target = { origin: url.origin, prefix: url.pathname.replace(/\/+$/, '') }
  if (targets.size >= 64) targets.clear()
  targets.set(baseUrl, target)
  return target
}

/** POST `body` once (no redirect, no retry): the answer, else ForwardFailedError (`timeout` past `timeoutMs` for the whole forward, `bad-answer` past the size, connectionFailure). */
async function postOnce(origin: string, path: string, headers: Record<string, string>, body: Buffer, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs
  try {
    const answer = await (await undiciAgent()).request({ origin, path, method: 'POST', headers, body, headersTimeout: timeoutMs, bodyTimeout: timeoutMs })
    // Its body within what is left (bodyTimeout bounds a pause only); a timer, not an AbortSignal: a signal's listeners cost 13 µs a forward.
    const timer = setTimeout(() => answer.body.destroy(new ForwardFailedError('timeout')), Math.max(1, deadline - Date.now()))
    return { status: answer.statusCode, headers: answer.headers, text: await answer.body.text().finally(() => clearTimeout(timer)) }
  } catch (err) {
    throw err instanceof ForwardFailedError ? err : new ForwardFailedError(connectionFailure(err), err)
  }
}

/** Why a forward failed, from undici's error code: not reached at all (nothing was sent), no answer in time, an answer too large, or broken off. */
export function connectionFailure(cause: unknown): ForwardFailure {
  const code = (cause as { code?: string })?.code ?? ''
  if (['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT'].includes(code)) return 'unreachable'
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return 'timeout'
  return code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE' ? 'bad-answer' : 'broken'
}
