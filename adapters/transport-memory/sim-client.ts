import http from 'node:http'
import https from 'node:https'
import { TransportError } from 'zapgate'
import { PING_MS, STREAM_TYPE, errorOfAnswer } from './wire.ts'
import type { Frame } from './wire.ts'

/**
 * HTTP to a simulator server with node's own client: JSON calls over kept-alive connections, and
 * the long-lived streams of device connections (one request each, frames as JSON lines).
 */

/** A device stream: its frames arrive through `onFrame`, one at a time (the next waits for the previous handler). */
export interface FrameStream {
  /** The first frame (the server's answer to opening the stream). */
  first: Frame
  /** Resolves when the stream ends: `closed` is its last frame when the server ended it on purpose. */
  ended: Promise<{ closed?: Extract<Frame, { type: 'closed' }>; error?: Error }>
  /** Drop the stream (the server sees the connection close). */
  destroy(): void
}

/** Something a stream's opening answered instead of frames: an HTTP refusal of the server. */
export class StreamRefused extends Error {
  constructor(
    readonly status: number,
    readonly body: { state?: string; message?: string; code?: string },
  ) {
    super(body?.message ?? `HTTP ${status}`)
  }
}

/** A client of one simulator server. */
export class SimClient {
  private readonly base: URL
  private readonly agent: http.Agent
  private readonly streamAgent: http.Agent

  constructor(url: string) {
    this.base = new URL(url)
    if (this.base.protocol !== 'http:' && this.base.protocol !== 'https:') throw new TypeError(`simUrl must be an http(s) URL, not ${JSON.stringify(url)}`)
    const Agent = this.base.protocol === 'https:' ? https.Agent : http.Agent
    // Idle sockets close after 30 s, before the server's 65 s: a reused socket is never closed under a request.
    this.agent = new Agent({ keepAlive: true, maxSockets: 64, timeout: 30_000 })
    this.streamAgent = new Agent({ keepAlive: false })
  }

  /**
   * POST (or DELETE, or GET) JSON; the answer's body, or the TransportError it stands for (`unreachable` when the server cannot be
   * reached or the connection drops mid-answer; `timeout` after `timeoutMs`, or once `signal` aborts: the call is cut off).
   */
  async call<T>(method: 'POST' | 'DELETE' | 'GET', path: string, body?: unknown, timeoutMs = 60_000, signal?: AbortSignal): Promise<T> {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    if (signal?.aborted) throw givenUp()
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const request = this.request(method, path, this.agent, payload, response => {
        let text = ''
        response.setEncoding('utf8')
        response.on('data', chunk => (text += chunk))
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }))
        // The connection dropped before the answer was complete: as unreachable as no answer at all.
        response.on('error', err => reject(asTransportError(err)))
      })
      request.setTimeout(timeoutMs, () => request.destroy(new TransportError('timeout', `the simulator did not answer within ${timeoutMs} ms`)))
      const abort = () => request.destroy(givenUp())
      signal?.addEventListener('abort', abort, { once: true })
      request.on('close', () => signal?.removeEventListener('abort', abort))
      request.on('error', err => reject(asTransportError(err)))
      request.end(payload)
    })
    const parsed = parseJson(text)
    if (status >= 200 && status < 300) return parsed as T
    throw errorOfAnswer(status, parsed)
  }

  /**
   * Open a device stream (POST `path` with `body`): resolves once its first frame arrived, then
   * hands every later frame to `onFrame` (with the first one) in order. Rejects with StreamRefused for an HTTP refusal,
   * a TransportError('unreachable') when the server cannot be reached.
   */
  openStream(path: string, body: unknown, onFrame: (frame: Frame, first: Frame) => Promise<void>): Promise<FrameStream> {
    return new Promise((resolve, reject) => {
      let settle: (result: { closed?: Extract<Frame, { type: 'closed' }>; error?: Error }) => void = () => {}
      const ended = new Promise<{ closed?: Extract<Frame, { type: 'closed' }>; error?: Error }>(r => (settle = r))
      let first: Frame | undefined
      let closed: Extract<Frame, { type: 'closed' }> | undefined
      let chain = Promise.resolve()
      const payload = JSON.stringify(body)
      const request = this.request('POST', path, this.streamAgent, payload, response => {
        if (response.statusCode !== 200 || !String(response.headers['content-type']).startsWith(STREAM_TYPE)) {
          let text = ''
          response.setEncoding('utf8')
          response.on('data', chunk => (text += chunk))
          response.on('end', () => reject(new StreamRefused(response.statusCode ?? 0, parseJson(text) as StreamRefused['body'])))
          // Half a refusal is none (without this, the promise never settled): the server is unreachable.
          response.on('error', err => reject(asTransportError(err)))
          return
        }
        let buffered = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => {
          buffered += chunk
          for (let newline = buffered.indexOf('\n'); newline !== -1; newline = buffered.indexOf('\n')) {
            const frame = parseJson(buffered.slice(0, newline)) as Frame
            buffered = buffered.slice(newline + 1)
            if (!frame || typeof frame !== 'object') continue
            if (frame.type === 'closed') closed = frame
            if (!first) {
              first = frame
              resolve({ first: frame, ended, destroy: () => request.destroy() })
            } else if (frame.type !== 'ping') chain = chain.then(() => onFrame(frame, first!)).catch(() => undefined)
          }
        })
        response.on('close', () => {
          if (!first) reject(new TransportError('unreachable', 'the simulator ended the stream before its first frame'))
          void chain.then(() => settle({ closed }))
        })
      })
      // Silence on the stream for three pings means the server (or the path to it) is gone.
      request.setTimeout(3 * PING_MS, () => request.destroy(new Error('the simulator stream went silent')))
      request.on('error', err => {
        if (!first) reject(asTransportError(err))
        else void chain.then(() => settle({ closed, error: err }))
      })
      request.end(payload)
    })
  }

  /** Release the kept-alive connections. */
  close(): void {
    this.agent.destroy()
    this.streamAgent.destroy()
  }

  // --- Internal helpers ---

  private request(
    method: string,
    path: string,
    agent: http.Agent,
    payload: string | undefined,
    onResponse: (response: http.IncomingMessage) => void,
  ): http.ClientRequest {
    const url = new URL(path, this.base)
    const send = url.protocol === 'https:' ? https.request : http.request
    const headers: Record<string, string | number> = { accept: `application/json, ${STREAM_TYPE}` }
    if (payload !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) })
    const request = send(url, { method, agent, headers }, onResponse)
    request.setNoDelay(true)
    return request
  }
}

// --- Internal helpers ---

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** A call cut off by its signal (the caller gave up): the server may not have heard of it. */
function givenUp(): TransportError {
  return new TransportError('timeout', 'the call to the simulator was given up (its deadline passed)')
}

function asTransportError(err: unknown): TransportError {
  if (err instanceof TransportError) return err
  return new TransportError('unreachable', `the simulator cannot be reached: ${(err as Error)?.message ?? String(err)}`, { cause: err })
}
