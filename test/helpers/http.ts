import Koa from 'koa'
import type { Server } from 'node:http'

/** A parsed HTTP answer. */
export interface Answer {
  status: number
  body: any
  headers: Headers
  text: string
}

/** How to encode a request body. */
export type Encoding = 'json' | 'form' | 'multipart'

/** POST `body` to `url` encoded as JSON, urlencoded or multipart. */
export async function post(url: string, body: Record<string, unknown>, encoding: Encoding = 'json'): Promise<Answer> {
  let init: RequestInit
  if (encoding === 'json') {
    init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
  } else if (encoding === 'form') {
    init = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: formEncode(body) }
  } else {
    const form = new FormData()
    for (const [key, value] of Object.entries(body)) {
      if (value instanceof Blob) form.append(key, value, (value as File).name ?? 'file')
      else form.append(key, typeof value === 'string' ? value : JSON.stringify(value))
    }
    init = { method: 'POST', body: form }
  }
  return request(url, init)
}

/** Send a raw request and parse the answer (JSON when it is JSON). */
export async function request(url: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(url, init)
  const text = await response.text()
  let body: unknown = undefined
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  return { status: response.status, body, headers: response.headers, text }
}

/** Listen on `port` (default: a free one); resolves with the base URL and a stop function. */
export async function listen(app: Koa, port = 0): Promise<{ url: string; server: Server; stop(): Promise<void> }> {
  const server = app.listen(port, '127.0.0.1')
  // Idle keep-alive connections live longer than fetch's own (4 s): on a loaded machine a server
  // closing one at 5 s can race the client reusing it, and the request fails with "other side closed".
  server.keepAliveTimeout = 30_000
  await new Promise(resolve => server.once('listening', resolve))
  const address = server.address()
  const bound = typeof address === 'object' && address ? address.port : 0
  return {
    url: `http://127.0.0.1:${bound}`,
    server,
    stop: () =>
      new Promise<void>(resolve => {
        server.closeAllConnections?.()
        server.close(() => resolve())
      }),
  }
}

// --- Internal helpers ---

function formEncode(body: Record<string, unknown>, prefix = ''): string {
  const parts: string[] = []
  for (const [key, value] of Object.entries(body)) {
    const name = prefix ? `${prefix}[${key}]` : key
    if (value !== null && typeof value === 'object') parts.push(formEncode(value as Record<string, unknown>, name))
    else parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`)
  }
  return parts.filter(Boolean).join('&')
}
