import type { IncomingMessage } from 'node:http'
import bourne from '@hapi/bourne'
import type { Context, Middleware, Next } from 'koa'
import { GatewayError } from '../../errors.ts'
import type { Logger } from '../../logger.ts'
import { FORWARD_TOLERANCE_MS, ForwardHeaders, verifyForward } from './signature.ts'
import { isSpent } from '../json-body.ts'
import { answerError, type HttpStatusMode } from '../render.ts'
import { requestState, type ForwardedFrom } from '../request-state.ts'

export type { ForwardedFrom } from '../request-state.ts'

/**
 * The largest body a forwarded request may have when the gateway's own limit is `limitBytes`: an
 * upload travels as base64 (4/3 of its size) and a form's text as JSON (escaped quotes and
 * backslashes take two characters), so twice the limit plus room for the envelope.
 */
export function forwardedBodyLimit(limitBytes: number): number {
  return 2 * limitBytes + 64 * 1024
}

/**
 * Read a request that says it was forwarded by another instance (`x-zapgate-forwarded-by`):
 * its raw body bytes (up to forwardedBodyLimit), checked against the signature before anything is
 * parsed. When a host bodyparser has read the body already, its raw text (`ctx.request.rawBody`,
 * koa-bodyparser's) is checked, else the parsed body serialised again: the forwarder sends
 * `JSON.stringify` of an object of strings, numbers and nested values, which parsing and
 * serialising again gives back byte for byte (key order and number forms survive). Resolves undefined, reading nothing, for a request without that header (read it as
 * usual). A verified one resolves with its parsed JSON fields, which are also put where a host
 * bodyparser puts them (`ctx.request.body`, so the gateway's body reader takes them as they are),
 * and is marked: the request state's `forwardedFrom` (the forwarding instance: never forward it
 * again, and the client it forwarded for). A wrong, stale or replayed signature is a
 * GatewayError('forward-refused') (403); a body over the limit `body-too-large`, cut short or not
 * JSON `body-malformed`. Only requests sent to `instanceId` (this instance) are accepted.
 */
export function forwardedRequestReader(
  secret: string | Buffer,
  limitBytes: number,
  instanceId: string,
  toleranceMs = FORWARD_TOLERANCE_MS,
): (ctx: Context) => Promise<Record<string, unknown> | undefined> {
  if (secret.length === 0) throw new Error('the cluster secret is empty')
  if (instanceId === '') throw new Error('the instance id is empty')
  const seen = new SeenSignatures(2 * toleranceMs)
  const limit = forwardedBodyLimit(limitBytes)
  return async function readForwarded(ctx: Context) {
    const from = ctx.get(ForwardHeaders.forwardedBy)
    if (from === '') return undefined
    const body = await bodyBytes(ctx, limit)
    const request = { receiver: instanceId, method: ctx.method, path: ctx.originalUrl, headers: ctx.req.headers, body }
    const verdict = verifyForward(secret, request, Date.now(), toleranceMs)
    if (verdict !== 'ok') throw new GatewayError('forward-refused', { cause: new Error(`forwarded request refused: ${verdict}`) })
    if (!seen.add(ctx.get(ForwardHeaders.signature))) throw new GatewayError('forward-refused', { cause: new Error('forwarded request refused: replayed') })
    const fields = parseFields(body)
    ;(ctx.request as { body?: unknown }).body = fields
    requestState(ctx).forwardedFrom = {
      instanceId: from,
      ...optional('clientIp', ctx.get(ForwardHeaders.clientIp)),
      ...optional('baseUrl', ctx.get(ForwardHeaders.baseUrl)),
    } satisfies ForwardedFrom
    return fields
  }
}

/** Options of verifyForwardedRequests. */
interface VerifyForwardedOptions {
  /** The gateway's body limit in bytes (forwarded bodies may be larger: forwardedBodyLimit). */
  limitBytes: number
  /** This instance's id: forwards signed for another destination are refused. */
  instanceId: string
  httpStatus: HttpStatusMode
  logger: Logger
  toleranceMs?: number
}

/**
 * Koa middleware in front of the gateway's routes: a request carrying `x-zapgate-forwarded-by` is
 * verified and marked as forwardedRequestReader does, and a refused one answered (403
 * `forward-refused`) in the gateway's error format; any other request passes untouched.
 */
export function verifyForwardedRequests(secret: string | Buffer, options: VerifyForwardedOptions): Middleware {
  const read = forwardedRequestReader(secret, options.limitBytes, options.instanceId, options.toleranceMs)
  return async function gatewayForwarded(ctx: Context, next: Next) {
    try {
      await read(ctx)
    } catch (err) {
      return answerError(ctx, options.httpStatus, options.logger, err)
    }
    await next()
  }
}

// --- Internal helpers ---

/**
 * Signatures accepted within the last `windowMs`: a request captured on the wire cannot be played
 * again while its timestamp is still fresh (each forward has its own nonce, so two real requests
 * never share a signature). Only verified signatures are kept, so its size follows real traffic.
 *
 * Kept in this process only, and that is enough: a signature names its destination instance, whose
 * id lives and dies with this process, so no other process (a new holder after a handover, this one
 * restarted) accepts it; and the window (twice the timestamp tolerance) outlasts the timestamp's
 * own validity. A memory in the store would cost a store write per forward for no more safety.
 */
class SeenSignatures {
  private readonly expiries = new Map<string, number>()

  constructor(private readonly windowMs: number) {}

  /** Remember `signature`; false when it was seen within the window. */
  add(signature: string): boolean {
    const now = Date.now()
    for (const [key, expiry] of this.expiries) {
      if (expiry > now) break
      this.expiries.delete(key)
    }
    if (this.expiries.has(signature)) return false
    this.expiries.set(signature, now + this.windowMs)
    return true
  }
}

function optional<K extends string>(key: K, value: string): Partial<Record<K, string>> {
  return value === '' ? {} : ({ [key]: value } as Record<K, string>)
}

function parseFields(body: Buffer): Record<string, unknown> {
  let parsed: unknown
  try {
    parsed = body.length === 0 ? {} : bourne.parse(body.toString('utf8'), { protoAction: 'remove' })
  } catch (cause) {
    throw new GatewayError('body-malformed', { cause })
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new GatewayError('body-not-object')
  return parsed as Record<string, unknown>
}

/** The body bytes: read from the request, or what a host bodyparser that read them first kept. */
function bodyBytes(ctx: Context, limitBytes: number): Promise<Buffer> {
  if (!isSpent(ctx.req)) return readRawBody(ctx.req, limitBytes)
  const { rawBody, body } = ctx.request as { rawBody?: unknown; body?: unknown }
  if (typeof rawBody === 'string') return Promise.resolve(Buffer.from(rawBody, 'utf8'))
  if (body !== undefined) return Promise.resolve(Buffer.from(JSON.stringify(body), 'utf8'))
  return Promise.reject(new GatewayError('body-not-object'))
}

/** The request's body bytes, up to `limitBytes` (413 beyond; 400 when cut short or unreadable). */
function readRawBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  const declared = req.headers['content-length']
  if (declared !== undefined && Number(declared) > limitBytes) {
    req.resume()
    return Promise.reject(new GatewayError('body-too-large'))
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let received = 0
    let settled = false
    const fail = (err: GatewayError) => {
      if (settled) return
      settled = true
      chunks.length = 0
      reject(err)
    }
    req.on('data', (chunk: Buffer) => {
      if (settled) return
      received += chunk.length
      if (received > limitBytes) return fail(new GatewayError('body-too-large'))
      chunks.push(chunk)
    })
    req.on('end', () => {
      if (settled) return
      if (declared !== undefined && received !== Number(declared)) return fail(new GatewayError('body-malformed'))
      settled = true
      resolve(Buffer.concat(chunks, received))
    })
    req.on('error', cause => fail(new GatewayError('body-malformed', { cause })))
    req.on('close', () => fail(new GatewayError('body-malformed')))
  })
}
