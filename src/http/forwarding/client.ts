import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'

/**
 * Kept-alive connections to the other instances (a fresh connection per forward through `fetch`
 * cost about five times the CPU: 540 against 115 µs per request, client and server). An idle
 * connection is dropped after 4 s, before the holder's own keep-alive time-out (Node reads its
 * `Keep-Alive: timeout=` hint), so a forward is not written to a connection being closed.
 */
const agents = { http: new HttpAgent({ keepAlive: true, timeout: 4_000 }), https: new HttpsAgent({ keepAlive: true, timeout: 4_000 }) }

/** An answer of the holder, its body read whole (up to the limit). */
interface PostedAnswer {
  status: number
  headers: IncomingMessage['headers']
  text: string
}

/** The answer was larger than allowed (declared or read). */
export class AnswerTooLargeError extends Error {}

/** The answer did not come within the time allowed (the connection is closed). */
export class AnswerTimeoutError extends Error {}

/** Where postOnce sends: an instance's base URL, parsed once (see target). */
export interface PostTarget {
  secure: boolean
  options: RequestOptions
  /** The path prefix of the instance's mount point ('' at the root). */
  prefix: string
}

/** `baseUrl` (an instance's advertised URL) as postOnce takes it. */
export function target(baseUrl: string): PostTarget {
  const url = new URL(baseUrl)
  const secure = url.protocol === 'https:'
  const options = {
    protocol: url.protocol,
    hostname: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port,
    method: 'POST',
    agent: secure ? agents.https : agents.http,
  }
  return { secure, options, prefix: url.pathname.replace(/\/+$/, '') }
}

/**
 * POST `body` to `path` of `to` on a kept-alive connection; resolves with the answer, its body read
 * up to `maxBytes` (AnswerTooLargeError past it). Rejects with the connection's error (its `code`:
 * ECONNREFUSED, ECONNRESET, ...) or AnswerTimeoutError after `timeoutMs`. No redirect is followed.
 * One timer and the request's own listeners, no AbortSignal nor async iterator: a forward's CPU is
 * mostly the HTTP hop itself.
 */
export function postOnce(
  to: PostTarget,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
  timeoutMs: number,
  maxBytes: number,
): Promise<PostedAnswer> {
  return new Promise<PostedAnswer>((resolve, reject) => {
    headers['content-length'] = String(body.length)
    const request = (to.secure ? httpsRequest : httpRequest)({ ...to.options, path: to.prefix + path, headers })
    const timer = setTimeout(() => request.destroy(new AnswerTimeoutError()), timeoutMs)
    const fail = (err: Error) => {
      clearTimeout(timer)
      reject(err)
    }
    request.once('error', fail)
    request.once('response', response => {
      if (Number(response.headers['content-length'] ?? -1) > maxBytes) return request.destroy(new AnswerTooLargeError())
      const chunks: Buffer[] = []
      let size = 0
      response.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > maxBytes) request.destroy(new AnswerTooLargeError())
        else chunks.push(chunk)
      })
      response.once('end', () => {
        clearTimeout(timer)
        // A connection that broke off mid-answer ends the stream early: not a whole answer.
        if (!response.complete) return reject(Object.assign(new Error('the answer broke off'), { code: 'ECONNRESET' }))
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks, size).toString('utf8') })
      })
      response.once('error', fail)
    })
    request.end(body)
  })
}
