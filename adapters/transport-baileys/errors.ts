import { TransportError } from 'zapgate'
import { statusCodeOf } from './policy.ts'

/**
 * Turn whatever a socket call threw into a TransportError. Baileys reports server errors as Boom with
 * the server's code in `data` and its text as the message (`rate-overlimit`, `item-not-found`,
 * `not-authorized`, ...), and socket states through `output.statusCode` (428 closed, 408 timed out).
 */
export function toTransportError(error: unknown, what: string): TransportError {
  if (error instanceof TransportError) return error
  const message = error instanceof Error ? error.message : String(error)
  const data = (error as { data?: unknown } | undefined)?.data
  const code = typeof data === 'number' ? data : statusCodeOf(error)
  const text = message.toLowerCase()
  const fail = (kind: TransportError['code'], detail: string) => new TransportError(kind, `${what}: ${detail}`, { cause: error })
  if (code === 429 || text.includes('rate-overlimit')) return fail('rate-limited', 'the network is rate limiting this device')
  if (text.includes('connection closed') || text.includes('connection terminated') || code === 428) return fail('not-connected', 'the connection is closed')
  if (text.includes('timed out') || code === 408) return fail('timeout', 'the network did not answer in time')
  if (code === 404 || code === 410 || text.includes('item-not-found') || text.includes('not-found')) return fail('not-found', message)
  if (code === 401 || code === 403 || text.includes('not-authorized') || text.includes('forbidden')) return fail('not-admin', message)
  if (code === 400 || code === 406 || text.includes('bad-request') || text.includes('not-acceptable')) return fail('invalid', message)
  return fail('failed', message)
}

/** Await `promise`, failing with TransportError('timeout') after `ms` (or once `signal` aborts). */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string, signal?: AbortSignal): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  let given: (() => void) | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TransportError('timeout', `${what}: no answer within ${ms} ms`)), ms)
    given = () => reject(new TransportError('timeout', `${what}: given up before it answered`))
    if (signal?.aborted) given()
    else signal?.addEventListener('abort', given)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
    if (given) signal?.removeEventListener('abort', given)
  }
}

/** Run a socket call with a deadline, mapping its failure to a TransportError. */
export async function socketCall<T>(what: string, ms: number, call: () => Promise<T>): Promise<T> {
  try {
    return await withTimeout(call(), ms, what)
  } catch (error) {
    throw toTransportError(error, what)
  }
}
