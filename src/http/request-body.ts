import Busboy from 'busboy'
import type { Transform } from 'node:stream'
import { createBrotliDecompress, createUnzip } from 'node:zlib'
import koaBodyParser from 'koa-bodyparser'
import type { Context, Middleware, Next } from 'koa'
import { GatewayError } from '../errors.ts'
import { Deadlines } from '../store/deadlines.ts'
import { isPlainObject, isSpent, parseJson, readBodyBytes } from './json-body.ts'
import { nestFields } from '../schema/nested-fields.ts'
import { hostUploads } from './host-files.ts'
import type { UploadedFile } from '../operations/operation.ts'
import type { MediaBudget } from '../domain/messaging/media-budget.ts'
import { forwardedBodyLimit, forwardedRequestReader } from './forwarding/receive.ts'
import { ForwardHeaders } from './forwarding/signature.ts'
import type { ClusterRouting } from './forwarding/to-holder.ts'
import { requestState, type ParsedBody } from './request-state.ts'

/** Bodies from this size on (declared by Content-Length) count against the media budget while the request lasts. */
const MEDIA_BODY_BYTES = 64 * 1024

/** Middleware: the body parsed (bodyReader); one that may carry media holds its size of the media budget (429 past it; one declared past its size limit is 413 instead); a forwarded one verified first. */
export function readRequestBody(deps: { bodyLimitBytes: number; bodyTimeoutMs: number; mediaBudget: MediaBudget; cluster?: ClusterRouting }): Middleware {
  const readForwarded = deps.cluster ? forwardedRequestReader(deps.cluster.secret, deps.bodyLimitBytes, deps.cluster.instances.id) : undefined
  const readBody = bodyReader(deps.bodyLimitBytes, deps.bodyTimeoutMs, readForwarded)
  const forwardedLimit = forwardedBodyLimit(deps.bodyLimitBytes)
  return function gatewayBody(ctx: Context, next: Next) {
    const state = requestState(ctx)
    const declared = ctx.req.headers['content-length']
    // A body declared past its limit holds nothing: the reader answers it 413 (final), never 429 (try again) while the budget is busy.
    const largest = readForwarded && ctx.req.headers[ForwardHeaders.forwardedBy] ? forwardedLimit : deps.bodyLimitBytes
    if (declared !== undefined && declared.length >= 5 && Number(declared) >= MEDIA_BODY_BYTES && Number(declared) <= largest) {
      try {
        state.mediaHold = deps.mediaBudget.hold(Number(declared))
      } catch (err) {
        // A forward refused so is still remembered once its body is seen to be signed: never run if played again (receive.ts).
        if (readForwarded) readForwarded.refusedUnread(ctx)
        else ctx.req.resume()
        throw err
      }
    }
    return readBody(ctx).then(body => ((state.body = body), next()))
  }
}

const NO_UPLOADS: ReadonlyMap<string, UploadedFile> = new Map()

/** Body reading for the gateway's routes (JSON, form, multipart alike; a host's parsed body as is; a forwarded one verified first); not whole within `timeoutMs` 408, connection closed. */
export function bodyReader(limitBytes: number, timeoutMs: number, readForwarded?: (ctx: Context) => Promise<unknown>): (ctx: Context) => Promise<ParsedBody> {
  // onProtoPoisoning and queryString are co-body's (not in koa-bodyparser's types): a `__proto__` key is dropped like any unknown field (its default answers 400);
  // a body's bytes and a form's %XX escapes are read in the charset it declares (CHARSETS).
  const limit = `${limitBytes}b`
  const options = { enableTypes: ['json', 'form'], jsonLimit: limit, formLimit: limit, strict: false, extendTypes: { json: ['application/*+json'] } }
  const parserFor = (charset: string) =>
    koaBodyParser({ ...options, onProtoPoisoning: 'remove', encoding: charset, queryString: { charset, ...FORM_LIMITS } } as koaBodyParser.Options)
  const parsers = new Map(Object.entries(CHARSETS).map(([name, charset]) => [name, parserFor(charset)]))
  const deadlines = new Deadlines(timeoutMs)
  const timedOut = (ctx: Context) => {
    ctx.set('Connection', 'close')
    return new GatewayError('body-timeout')
  }
  const inTime = <T>(ctx: Context, reading: Promise<T>): Promise<T> =>
    deadlines.run(reading, () => {
      reading.catch(() => {}) // it fails later, once the connection is closed: nobody waits for it any more
      return timedOut(ctx)
    })
  /** A plain JSON body (a send's): its bytes within the time limit, parsed; in one promise (readBodyBytes watches the limit). */
  const readPlainJson = (ctx: Context): Promise<ParsedBody> => {
    const timeLimit = arrived(ctx) ? undefined : { deadlines, timedOut: () => timedOut(ctx) }
    return readBodyBytes(ctx.req, limitBytes, timeLimit).then(raw => {
      const body = ((ctx.request as { body?: unknown }).body = parseJson(raw)) // where koa-bodyparser would have put it
      if (!isPlainObject(body)) throw new GatewayError('body-not-object')
      return { fields: body, uploads: NO_UPLOADS, raw }
    })
  }
  const readOwn = (ctx: Context): Promise<ParsedBody> => {
    const { headers } = ctx.req
    const plain = (ctx.request as { body?: unknown }).body === undefined && PLAIN_JSON.test(headers['content-type'] ?? '')
    return plain && hasBody(ctx) && (headers['content-encoding'] ?? 'identity') === 'identity' ? readPlainJson(ctx) : readAny(ctx)
  }
  // A forwarded body within the deadline too: anyone can send its header.
  return readForwarded ? ctx => inTime(ctx, readForwarded(ctx)).then(() => readOwn(ctx)) : readOwn
  /** Any body: a host's parsed one, multipart, a form, JSON in another charset or encoding. */
  async function readAny(ctx: Context): Promise<ParsedBody> {
    let uploads = NO_UPLOADS
    const unread = !ctx.req.readableEnded
    const hostBody = (ctx.request as { body?: unknown }).body
    let body: unknown = hostBody
    if (hostBody === undefined || (unread && isPlainObject(hostBody) && Object.keys(hostBody).length === 0)) {
      const headers = ctx.req.headers
      // A content coding is case-insensitive (RFC 9110 8.4.1): `GZIP` or `Identity` was 415. Written back lower-case, as the JSON and form parser (inflation) reads it from the request.
      const encoding = headers['content-encoding']
      if (encoding !== undefined && encoding !== encoding.toLowerCase()) headers['content-encoding'] = encoding.toLowerCase()
      const plainJson = PLAIN_JSON.test(headers['content-type'] ?? '')
      if (!plainJson && ctx.is('multipart')) {
        const files = new Map<string, UploadedFile>()
        body = await inTime(ctx, readMultipart(ctx, limitBytes, files))
        uploads = files
      } else if (!hasBody(ctx)) {
        body = {}
      } else if (plainJson && (headers['content-encoding'] ?? 'identity') === 'identity') {
        return readPlainJson(ctx)
      } else if ((plainJson || ctx.is('json', 'urlencoded', 'application/*+json')) && parsers.has(ctx.request.charset.toLowerCase())) {
        ;(ctx.request as { body?: unknown }).body = undefined
        const parse = parsers.get(ctx.request.charset.toLowerCase())!
        await inTime(
          ctx,
          parse(ctx, async () => {}).catch((err: ParserError) => mapParserError(err, ctx.req)),
        )
        formFieldsWithin(ctx)
        body = (ctx.request as { body?: unknown }).body
      } else {
        throw new GatewayError('body-unsupported-type')
      }
    } else {
      // A host's parser read the body first (koa-bodyparser's form: its fields within qs's count too), and its files, where it put them.
      // Its own limit may be past bodyLimit: the body is held to it here (a forward's by its reader, to the forwarded limit).
      if (!requestState(ctx).forwardedFrom) hostBodyWithin(ctx, limitBytes)
      formFieldsWithin(ctx)
      const files = await hostUploads(ctx, limitBytes)
      if (files && isPlainObject(body)) {
        const fields: Record<string, unknown> = { ...body }
        for (const [name, file] of files) if (!Object.hasOwn(fields, name)) fields[name] = file.fileName || name // as readMultipart names them
        ;[body, uploads] = [fields, files]
      }
    }
    if (!isPlainObject(body)) throw new GatewayError('body-not-object')
    return { fields: body, uploads }
  }
}

// --- Internal helpers ---

/**
 * A form's lists keep up to 1,000 entries (qs's default of 20 made a longer one an object, refused
 * where JSON's list is taken); an index past that is an object key, as qs does. Its fields past
 * 1,000 qs drops silently: a body of more is refused instead (formFieldsWithin).
 */
const FORM_LIMITS = { arrayLimit: 1000 }

/** qs's `parameterLimit`: the fields of a form it reads. */
const FORM_FIELDS = 1000

const PLAIN_JSON = /^application\/json\s*(?:;\s*charset=(?:"?utf-8"?)\s*)?$/i
/** The charsets a JSON or form body is read in, by the name it declares (none: UTF-8); any other is 415, never read as UTF-8 (a Latin-1 "ação", as Apache HttpClient sends forms, became "a��o"). */
const CHARSETS: Record<string, string> = { '': 'utf-8', 'utf-8': 'utf-8', utf8: 'utf-8', 'us-ascii': 'utf-8', 'iso-8859-1': 'iso-8859-1', latin1: 'iso-8859-1' }

/** A form of more fields than qs reads (its `&`-separated parts, empty ones counted, as qs counts them) is 413: never read with its tail dropped, where a dropped field could change the operation a body selects. */
function formFieldsWithin(ctx: Context): void {
  const raw = (ctx.request as { rawBody?: unknown }).rawBody
  if (!ctx.is('urlencoded') || typeof raw !== 'string') return
  let parts = 1
  for (let at = raw.indexOf('&'); at !== -1 && parts <= FORM_FIELDS; at = raw.indexOf('&', at + 1)) parts++
  if (parts > FORM_FIELDS) throw new GatewayError('body-too-large')
}

/** A body a host's parser read is 413 past `limitBytes`, as the gateway's own reading: its declared size, or the text that parser kept (koa-bodyparser's `rawBody`: decoded, a chunked or compressed body's too). */
function hostBodyWithin(ctx: Context, limitBytes: number): void {
  const raw = (ctx.request as { rawBody?: unknown }).rawBody
  const past =
    Number(ctx.req.headers['content-length'] ?? 0) > limitBytes ||
    (typeof raw === 'string' && raw.length > limitBytes / 3 && Buffer.byteLength(raw) > limitBytes)
  if (past) throw new GatewayError('body-too-large')
}

/** Whether the whole declared body is already buffered in the request stream. */
function arrived(ctx: Context): boolean {
  const length = ctx.req.headers['content-length']
  return length !== undefined && ctx.req.readableLength >= Number(length)
}

function hasBody(ctx: Context): boolean {
  const { headers } = ctx.req
  const length = headers['content-length']
  return length ? Number(length) > 0 : (headers['transfer-encoding'] ?? '') !== ''
}

/** What koa-bodyparser (co-body, raw-body, inflation) throws. */
type ParserError = { status?: number; type?: string; code?: unknown; body?: unknown }

/**
 * A body the parser cannot read is the client's to fix (413, 415 or 400), a Content-Encoding that does not match its bytes included.
 * The parser stops reading where it failed (raw-body pauses the stream): the rest is discarded, so a kept-alive connection can carry the next request.
 */
function mapParserError(err: ParserError, req: Context['req']): never {
  req.unpipe() // from the decompressor, for a gzip, deflate or br body
  req.resume()
  // The parser's error carries the raw body (passwords, keys), a JSON one's message the bytes around the fault: neither may reach a log as a cause.
  delete err.body
  if (err.status === 413 || err.type === 'entity.too.large') throw new GatewayError('body-too-large', { cause: err })
  if (err.status === 415) throw new GatewayError('body-unsupported-type', { cause: err })
  if (err.status && err.status < 500) throw new GatewayError('body-malformed', err instanceof SyntaxError ? {} : { cause: err })
  throw new GatewayError('body-not-object', { cause: err })
}

function readMultipart(ctx: Context, limitBytes: number, uploads: Map<string, UploadedFile>): Promise<Record<string, unknown>> {
  if (isSpent(ctx.req)) return Promise.reject(new GatewayError('body-not-object'))
  // As readBodyBytes: a body declared too large is refused at once, not read for up to the body time-out holding its declared size of the media budget.
  if (Number(ctx.req.headers['content-length']) > limitBytes) return (ctx.req.resume(), Promise.reject(new GatewayError('body-too-large')))
  const decoder = decoderFor(ctx.req.headers['content-encoding'])
  if (decoder === null) return (ctx.req.resume(), Promise.reject(new GatewayError('body-unsupported-type')))
  return new Promise((resolve, reject) => {
    const fields: [string, unknown][] = [] // in order, a name sent twice twice (nestFields)
    const fileNames = new Map<string, string>()
    let total = 0
    let failed = false
    const fail = (err: GatewayError) => {
      if (failed) return
      failed = true
      ctx.req.unpipe()
      decoder?.destroy()
      ctx.req.resume()
      reject(err)
    }
    const count = (bytes: number) => (total += bytes) > limitBytes && fail(new GatewayError('body-too-large'))
    let parser: Busboy.Busboy
    try {
      // defParamCharset: a file name is read as UTF-8 (browsers, curl and fetch write its bytes so), not busboy's default Latin-1; `filename*` still says its own.
      parser = Busboy({
        headers: ctx.req.headers,
        defParamCharset: 'utf8',
        limits: { fileSize: limitBytes, fieldSize: limitBytes, files: 20, fields: 500, parts: 520 },
      })
    } catch (cause) {
      fail(new GatewayError('body-not-object', { cause }))
      return
    }
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) return fail(new GatewayError('body-too-large'))
      count(value.length)
      fields.push([name, value])
    })
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => (count(chunk.length), chunks.push(chunk)))
      stream.on('limit', () => fail(new GatewayError('body-too-large')))
      // A file part cut short (no closing boundary) errors on its own stream: unhandled, it would end the process.
      stream.on('error', cause => fail(new GatewayError('body-not-object', { cause })))
      stream.on('end', () => {
        // A form's file input left empty (no name, no bytes, as browsers send it) is no file: absent, like an empty field.
        if (failed || (!info.filename && chunks.length === 0)) return
        uploads.set(name, { data: Buffer.concat(chunks), fileName: info.filename || undefined, mimetype: info.mimeType || undefined })
        fileNames.set(name, info.filename || name)
      })
    })
    for (const limit of ['partsLimit', 'filesLimit', 'fieldsLimit'] as const) parser.on(limit, () => fail(new GatewayError('body-too-large')))
    parser.on('error', cause => fail(new GatewayError('body-not-object', { cause })))
    parser.on('close', () => {
      if (failed) return
      // A file is a field by its file name, unless a text field has its name.
      for (const [name, fileName] of fileNames) if (!fields.some(([field]) => field === name)) fields.push([name, fileName])
      resolve({ ...nestFields(fields) })
    })
    // A client gone mid-body stops the pipe short of the parser's end (`complete` would say the bytes were parsed, not delivered).
    ctx.req.on('close', () => {
      if (!ctx.req.readableEnded) fail(new GatewayError('body-not-object'))
    })
    // Its bytes decoded as the JSON and form parser decodes them; bytes that are not in their encoding: 400.
    decoder?.on('error', cause => fail(new GatewayError('body-not-object', { cause })))
    // Every (decoded) byte counts against the limit, the framing and what comes before the first part too (which the parser skips):
    // a few KiB of gzip that decode to gigabytes, or a chunked body of endless preamble, are refused at the limit, not read until the body time-out.
    let read = 0
    ;(decoder ?? ctx.req).on('data', (chunk: Buffer) => (read += chunk.length) > limitBytes && fail(new GatewayError('body-too-large')))
    ;(decoder ? ctx.req.pipe(decoder) : ctx.req).pipe(parser)
  })
}

/** The decoder of a body's Content-Encoding, as koa-bodyparser's (inflation) reads JSON and forms: none for identity, zlib's for gzip, deflate and br; null for any other (415). */
function decoderFor(encoding = 'identity'): Transform | undefined | null {
  if (encoding === 'identity') return undefined
  if (encoding === 'gzip' || encoding === 'deflate') return createUnzip()
  return encoding === 'br' ? createBrotliDecompress() : null
}
