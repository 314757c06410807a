import { createHash } from 'node:crypto'
import type { Context } from 'koa'
import { GatewayError } from '../../errors.ts'
import { FORWARD_TOLERANCE_MS, ForwardHeaders, verifyForward, type ForwardSigned } from './signature.ts'
import { isPlainObject, isSpent, parseJson, readBodyBytes } from '../json-body.ts'
import { requestState } from '../request-state.ts'
import { hasHostFiles } from '../host-files.ts'
import { NOT_HOLDER_HEADER } from './send.ts'

/** The largest forwarded body for a gateway limit of `limitBytes`: uploads travel as base64 and form text as JSON (escapes), so twice the limit plus the envelope. */
export function forwardedBodyLimit(limitBytes: number): number {
  return 2 * limitBytes + 64 * 1024
}

/** Read a forwarded request (`x-zapgate-forwarded-by`): its raw body checked before parsing (docs/scaling.md), else 403; marked `forwardedFrom`. `refusedUnread` drains a request refused before its body was read. */
export function forwardedRequestReader(secret: string | Buffer, limitBytes: number, instanceId: string, toleranceMs = FORWARD_TOLERANCE_MS) {
  if (secret.length === 0) throw new Error('the cluster secret is empty')
  if (instanceId === '') throw new Error('the instance id is empty')
  // Signatures accepted, each until its timestamp is surely stale (then refused as such): in this process's memory only, enough (docs/scaling.md, "Replays").
  const seen = new Map<string, number>()
  // Read in arrival order by one iterator kept across requests: a new one would step again over every entry deleted since the Map was last compacted (54 µs a request at 2,000 forwards a second).
  let oldest: Iterator<[string, number]> | undefined
  let next: [string, number] | undefined
  const limit = forwardedBodyLimit(limitBytes)
  /** A forward's verdict: its signature checked, and remembered when `ok` and new (else `replayed`). */
  const admit = (ctx: Context, body: ForwardSigned['body']): string => {
    const headers = ctx.req.headers
    const now = Date.now()
    for (; (next ??= (oldest ??= seen.entries()).next().value) !== undefined && next[1] <= now; next = undefined) seen.delete(next[0])
    if (next === undefined) oldest = undefined // read to the end: a finished iterator sees no later entry
    const verdict = verifyForward(secret, { receiver: instanceId, method: ctx.method, path: ctx.originalUrl, headers, body }, now, toleranceMs)
    if (verdict !== 'ok') return verdict
    // Remembered as its bytes: the base64url text of one signature has variants (padding, the last character's unused bits).
    const signature = Buffer.from(headers[ForwardHeaders.signature] as string, 'base64url').toString('base64url')
    if (seen.has(signature)) return 'replayed'
    // Kept past the last moment its timestamp passes (at most `toleranceMs` ahead of now), in arrival order for the prune above.
    seen.set(signature, now + 2 * toleranceMs + 1)
    return verdict
  }
  const readForwarded = async function readForwarded(ctx: Context): Promise<Record<string, unknown> | undefined> {
    const headers = ctx.req.headers
    const from = headers[ForwardHeaders.forwardedBy]
    if (typeof from !== 'string' || from === '') return undefined
    // Its uploads travel in its signed JSON (data URIs): files a host parser took from the request (made multipart on its way) were signed by nobody.
    if (hasHostFiles(ctx)) throw new GatewayError('forward-refused', { cause: new Error('forwarded request refused: files beside its signed body') })
    const body = await bodyBytes(ctx, limit)
    const verdict = admit(ctx, body)
    // Signed for another instance (this URL's process before a restart): refused as one that does not hold the device, so the forwarder asks again.
    if (verdict === 'wrong-destination') ctx.set(NOT_HOLDER_HEADER, '1')
    if (verdict !== 'ok') throw new GatewayError('forward-refused', { cause: new Error(`forwarded request refused: ${verdict}`) })
    const fields = body.length === 0 ? {} : parseJson(body)
    if (!isPlainObject(fields)) throw new GatewayError('body-not-object')
    ;(ctx.request as { body?: unknown }).body = fields
    const { [ForwardHeaders.clientIp]: clientIp, [ForwardHeaders.baseUrl]: baseUrl } = headers as Record<string, string | undefined> // custom headers: text
    requestState(ctx).forwardedFrom = { instanceId: from, ...(clientIp ? { clientIp } : {}), ...(baseUrl ? { baseUrl } : {}) }
    return fields
  }
  /**
   * A request refused before its body was read (the media budget's 429): its body drained; a forward's
   * hashed as it drains (not kept) and its signature remembered once it verifies, so that the same bytes
   * played again within the window are refused as a replay, never run after the forwarder relayed that 429.
   */
  const refusedUnread = (ctx: Context): void => {
    const { req } = ctx
    const from = req.headers[ForwardHeaders.forwardedBy]
    if (typeof from === 'string' && from !== '' && !isSpent(req)) {
      const digest = createHash('sha256')
      let size = 0
      req.on('data', (chunk: Buffer) => void ((size += chunk.length) <= limit && digest.update(chunk)))
      req.once('end', () => void (size <= limit && admit(ctx, { sha256: digest.digest('hex') })))
    } else if (typeof from === 'string' && from !== '') {
      bodyBytes(ctx, limit).then(body => admit(ctx, body), ignore) // a host parser read it first
    }
    req.resume()
  }
  return Object.assign(readForwarded, { refusedUnread })
}

// --- Internal helpers ---

const ignore = () => {}

/** The body bytes: read from the request, or what a host bodyparser that read them first kept. */
function bodyBytes(ctx: Context, limitBytes: number): Promise<Buffer> {
  if (!isSpent(ctx.req)) return readBodyBytes(ctx.req, limitBytes)
  const { rawBody, body } = ctx.request as { rawBody?: unknown; body?: unknown }
  if (typeof rawBody === 'string') return Promise.resolve(Buffer.from(rawBody, 'utf8'))
  if (body !== undefined) return Promise.resolve(Buffer.from(JSON.stringify(body), 'utf8'))
  return Promise.reject(new GatewayError('body-not-object'))
}
