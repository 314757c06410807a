import { createServer, type IncomingHttpHeaders } from 'node:http'

/** One delivery as the receiver saw it. */
export interface Delivery {
  headers: IncomingHttpHeaders
  body: string
}

/** A local webhook receiver (node:http in the driver process) that answers every POST 204. */
export interface WebhookReceiver {
  url: string
  /** Requests answered since the last reset. */
  readonly requests: number
  /** Distinct `webhook-id`s of message events (bodies with an `event` field) since the last reset. */
  readonly unique: number
  /** The first message event since the last reset. */
  readonly first?: Delivery
  /** performance.now() of the last request that brought `requests` or `unique` up. */
  readonly lastAt: number
  /** TCP connections accepted since the last reset (a keep-alive sender opens few). */
  readonly connections: number
  /** Forget what arrived so far. */
  reset(): void
  /**
   * Resolve once `count` of `what` have arrived since the last reset, with performance.now() of the
   * one that made it; or undefined after `timeoutMs`.
   */
  reached(what: 'requests' | 'unique', count: number, timeoutMs: number): Promise<number | undefined>
  close(): Promise<void>
}

/** Start a receiver on a free loopback port. */
export async function startReceiver(): Promise<WebhookReceiver> {
  let ids = new Set<string>()
  let requests = 0
  let first: Delivery | undefined
  let lastAt = 0
  let waiters: { what: 'requests' | 'unique'; count: number; resolve: (at: number) => void }[] = []

  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const now = performance.now()
      requests++
      lastAt = now
      const id = req.headers['webhook-id']
      if (typeof id === 'string' && isMessageEvent(body) && !ids.has(id)) {
        ids.add(id)
        first ??= { headers: req.headers, body }
      }
      res.writeHead(204).end()
      waiters = waiters.filter(waiter => {
        const done = (waiter.what === 'requests' ? requests : ids.size) >= waiter.count
        if (done) waiter.resolve(now)
        return !done
      })
    })
  })
  server.keepAliveTimeout = 60_000
  let connections = 0
  server.on('connection', () => connections++)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }

  return {
    url: `http://127.0.0.1:${port}/hook`,
    get requests() {
      return requests
    },
    get unique() {
      return ids.size
    },
    get first() {
      return first
    },
    get lastAt() {
      return lastAt
    },
    get connections() {
      return connections
    },
    reset() {
      ids = new Set()
      requests = 0
      connections = 0
      first = undefined
    },
    reached(what, count, timeoutMs) {
      if ((what === 'requests' ? requests : ids.size) >= count) return Promise.resolve(lastAt)
      return new Promise(resolve => {
        const waiter = { what, count, resolve: (at: number | undefined) => (clearTimeout(timer), resolve(at)) }
        const timer = setTimeout(() => {
          waiters = waiters.filter(w => w !== waiter)
          resolve(undefined)
        }, timeoutMs)
        waiters.push(waiter)
      })
    },
    close() {
      server.closeAllConnections()
      return new Promise(resolve => server.close(() => resolve()))
    },
  }
}

// --- Internal helpers ---

/** Whether a body is a gateway event (JSON with an `event` field). */
function isMessageEvent(body: string): boolean {
  try {
    return typeof JSON.parse(body)?.event === 'string'
  } catch {
    return false
  }
}
