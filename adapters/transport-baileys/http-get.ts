import { request as httpRequest, type Agent } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { pipeline, Readable, Transform } from 'node:stream'

/** A GET's answer. */
interface HttpAnswer {
  status: number
  body: Buffer
}

/** A GET's answer whose body is read as it comes. */
interface HttpStreamAnswer {
  status: number
  /** Fails past `maxBytes`, at the deadline, or when the connection ends the body early. */
  body: Readable
}

/** Options of httpGet. */
interface HttpGetOptions {
  /** The Node agent to go through (a proxy agent); undefined: direct. */
  agent?: Agent
  /** The whole request (connect, answer, body) must be done within this long. */
  timeoutMs: number
  headers?: Record<string, string>
  /** Read at most this many bytes of the body (more fails the request); 0: read no body. */
  maxBytes: number
  /** httpGetStream only: once the head has come, `timeoutMs` no longer bounds the body, which fails after this long without a byte instead (a body read at a slow reader's pace takes what it takes). */
  bodyIdleMs?: number
}

/**
 * GET `url` over node:http(s), through `agent` when given. Node's `fetch` takes only undici
 * dispatchers, so the adapter's own requests (version lookup, media through a proxy, the
 * reachability check) use this to go through the same Node proxy agent as the WebSocket. Rejects
 * with the network error (its `code`, e.g. ENOTFOUND or ECONNREFUSED, kept) or a timeout.
 */
export async function httpGet(url: string, options: HttpGetOptions): Promise<HttpAnswer> {
  const { status, body } = await httpGetStream(url, options)
  return { status, body: await readAll(body) }
}

/** All the bytes of `stream`; past `maxBytes` it is destroyed and this rejects. */
export async function readAll(stream: Readable, maxBytes = Infinity): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stream) {
    size += (chunk as Buffer).length
    if (size > maxBytes) {
      stream.destroy()
      throw new Error(`the download is larger than ${maxBytes} bytes`)
    }
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks)
}

/**
 * httpGet, answering once the head has come: the body is a stream, read at the pace of its reader
 * (memory bounded by the stream buffers). `timeoutMs` bounds the whole request, its body included,
 * unless `bodyIdleMs` is given: then it bounds the wait for the head, and the body fails once no byte
 * has come for `bodyIdleMs` (while its reader is slow to take them too). At the deadline the body
 * fails (ETIMEDOUT), as it does past `maxBytes`.
 */
export function httpGetStream(url: string, options: HttpGetOptions): Promise<HttpStreamAnswer> {
  return new Promise((resolve, reject) => {
    const target = new URL(url)
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest
    let body: Transform | undefined
    const fail = (error: Error) => (body ? body.destroy(error) : req.destroy(error))
    const req = request(target, { method: 'GET', agent: options.agent, headers: options.headers }, res => {
      const status = res.statusCode ?? 0
      if (options.maxBytes === 0) {
        res.destroy()
        return resolve({ status, body: Readable.from([]) })
      }
      let size = 0
      const idleMs = options.bodyIdleMs
      if (idleMs !== undefined) {
        clearTimeout(timer)
        timer = setTimeout(() => fail(Object.assign(new Error(`no bytes from ${target.host} for ${idleMs} ms`), { code: 'ETIMEDOUT' })), idleMs)
      }
      body = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          if (idleMs !== undefined) timer.refresh()
          size += chunk.length
          if (size > options.maxBytes) done(new Error(`the answer of ${target.host} is larger than ${options.maxBytes} bytes`))
          else done(null, chunk)
        },
      })
      // A failure of either side (the connection cut mid-body, the limit, the deadline) ends both.
      resolve({ status, body: pipeline(res, body, () => clearTimeout(timer)) })
    })
    let timer = setTimeout(
      () => fail(Object.assign(new Error(`no answer from ${target.host} within ${options.timeoutMs} ms`), { code: 'ETIMEDOUT' })),
      options.timeoutMs,
    )
    // https-proxy-agent reports the proxy's answer to CONNECT: anything but 200 is the proxy's refusal, not the target's.
    req.on('proxyConnect', (connect: { statusCode?: number }) => {
      if (connect.statusCode !== 200)
        req.destroy(Object.assign(new Error(`the proxy refused the connection to ${target.host} (HTTP ${connect.statusCode})`), { code: 'EPROXYREFUSED' }))
    })
    req.on('error', reject)
    req.on('close', () => body === undefined && clearTimeout(timer))
    req.end()
  })
}

/** A short description of a network error: its message, which for Node's errors names the code and host. */
export function networkErrorText(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  const code = (error as { code?: unknown } | undefined)?.code
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message
}
