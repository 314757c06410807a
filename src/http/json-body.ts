import type { IncomingMessage } from 'node:http'
import bourne from '@hapi/bourne'
import { GatewayError } from '../errors.ts'
import type { Deadlines } from '../store/deadlines.ts'

/** A time limit on reading a body: `deadlines` watches the read, which fails with `timedOut()` past it. */
interface BodyTimeLimit {
  deadlines: Deadlines
  timedOut(): Error
}

/** A body's bytes: 413 over `limitBytes`, 400 `body-malformed` cut short or over its length, 400 `body-not-object` already consumed (as co-body answers); `timeLimit`'s error when not whole in time. */
export function readBodyBytes(req: IncomingMessage, limitBytes: number, timeLimit?: BodyTimeLimit): Promise<Buffer> {
  if (isSpent(req)) return Promise.reject(new GatewayError('body-not-object'))
  const declared = req.headers['content-length']
  const length = declared === undefined ? -1 : Number(declared)
  if (length > limitBytes) {
    req.resume() // the rest is discarded, so the connection can carry the next request
    return Promise.reject(new GatewayError('body-too-large'))
  }
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = []
    let received = 0
    // Listeners stay until the request is done: once settled they let the rest of a body flow by unkept.
    let settled = false
    // A large declared body is copied into one buffer of its size as it arrives: never held twice.
    let whole = length >= WHOLE_BUFFER_BYTES ? Buffer.allocUnsafe(length) : undefined
    // Watched here, not by a second promise around this one (a send's body rarely arrives with its headers).
    const answered = timeLimit?.deadlines.watch(() => fail(timeLimit.timedOut()))
    const settle = () => {
      answered?.()
      settled = true
      chunks = []
      whole = undefined
    }
    const fail = (err: Error) => {
      if (settled) return
      settle()
      reject(err)
    }
    req.on('data', (chunk: Buffer) => {
      if (settled) return
      if (received + chunk.length > limitBytes) return fail(new GatewayError('body-too-large'))
      if (whole && received + chunk.length > whole.length) return fail(new GatewayError('body-malformed')) // more than declared
      if (whole) chunk.copy(whole, received)
      else chunks.push(chunk)
      received += chunk.length
    })
    req.on('end', () => {
      if (settled) return
      if (length >= 0 && received !== length) return fail(new GatewayError('body-malformed'))
      const bytes = whole ?? (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received))
      settle()
      resolve(bytes)
    })
    // Errors built only when they answer ('close' follows every request); a client gone before these listeners: 'close' only.
    req.on('error', cause => {
      if (!settled) fail(new GatewayError('body-malformed', { cause }))
    })
    req.on('close', () => {
      if (!settled) fail(new GatewayError('body-malformed'))
    })
  })
}

/** JSON bytes parsed (a BOM skipped, a `__proto__` key dropped, empty as `''`); not JSON is 400 `body-malformed`, without the parser's error (its message quotes the body). */
export function parseJson(bytes: Buffer): unknown {
  let text = bytes.toString('utf8')
  if (text.charCodeAt(0) === BOM) text = text.slice(1)
  try {
    return text === '' ? '' : bourne.parse(text, { protoAction: 'remove' })
  } catch {
    throw new GatewayError('body-malformed')
  }
}

/** Whether `value` is an object made by `{}` or JSON (the only body the operations take). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** Whether a request's body can no longer be read: already read to its end, or its stream destroyed. */
export function isSpent(req: IncomingMessage): boolean {
  return req.readableEnded || req.destroyed
}

// --- Internal helpers ---

const BOM = 0xfeff
/** From this declared size on, a body is read into one buffer of that size. */
const WHOLE_BUFFER_BYTES = 64 * 1024
