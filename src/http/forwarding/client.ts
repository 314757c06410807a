import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'

/**
 * Kept-alive connections to the other instances (a fresh connection per forward through `fetch`
 * cost about five times the CPU), idle ones dropped after 4 s, before the holder's own keep-alive
 * time-out (Node reads its `Keep-Alive: timeout=` hint): a forward never goes to a closing connection.
 */
const agents = { http: new HttpAgent({ keepAlive: true, timeout: 4_000 }), https: new HttpsAgent({ keepAlive: true, timeout: 4_000 }) }

/** The answer was larger than allowed (declared or read). */
export class AnswerTooLargeError extends Error {}

/** The answer did not come within the time allowed (the connection is closed). */
export class AnswerTimeoutError extends Error {}

/** The instances' base URLs as request options, parsed once each (a cluster has a few). */
const targets = new Map<string, { options: RequestOptions; prefix: string }>()

/** The path prefix of an instance's advertised URL (its mount point; '' at the root). */
export function prefixOf(baseUrl: string): string {
  return targetOf(baseUrl).prefix
}

/**
 * POST `body` to `path` under `baseUrl` on a kept-alive connection; resolves with the answer, its
 * body read up to `maxBytes` (AnswerTooLargeError past it). Rejects with the connection's error (its
 * `code`: ECONNREFUSED, ECONNRESET, ...) or AnswerTimeoutError after `timeoutMs`; no redirect is
 * followed. One timer and the request's own listeners (no AbortSignal nor async iterator).
 */
export function postOnce(baseUrl: string, path: string, headers: Record<string, string>, body: Buffer, timeoutMs: number, maxBytes: number) {
  const { options, prefix } = targetOf(baseUrl)
  return new Promise<{ status: number; headers: IncomingMessage['headers']; text: string }>((resolve, reject) => {
    headers['content-length'] = String(body.length)
    const request = (options.agent === agents.https ? httpsRequest : httpRequest)({ ...options, path: prefix + path, headers })
    const timer = setTimeout(() => request.destroy(new AnswerTimeoutError()), timeoutMs)
    const fail = (err: Error) => (clearTimeout(timer), reject(err))
    request.once('error', fail)
    request.once('response', response => {
      if (Number(response.headers['content-length'] ?? -1) > maxBytes) return request.destroy(new AnswerTooLargeError())
      const chunks: Buffer[] = []
      let size = 0
      response.on('data', (chunk: Buffer) => ((size += chunk.length) > maxBytes ? request.destroy(new AnswerTooLargeError()) : chunks.push(chunk)))
      response.once('error', fail)
      response.once('end', () => {
        clearTimeout(timer)
        // A connection that broke off mid-answer ends the stream early: not a whole answer.
        if (!response.complete) return reject(Object.assign(new Error('the answer broke off'), { code: 'ECONNRESET' }))
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks, size).toString('utf8') })
      })
    })
    request.end(body)
  })
}

function targetOf(baseUrl: string) {
  let target = targets.get(baseUrl)
  if (target) return target
  const url = new URL(baseUrl)
  const agent = url.protocol === 'https:' ? agents.https : agents.http
  target = {
    options: { protocol: url.protocol, hostname: url.hostname.replace(/^\[|\]$/g, ''), port: url.port, method: 'POST', agent },
    prefix: url.pathname.replace(/\/+$/, ''),
  }
  if (targets.size >= 64) targets.clear()
  targets.set(baseUrl, target)
  return target
}
