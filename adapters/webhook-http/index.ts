import type { ClientRequest, Agent as HttpAgent } from 'node:http'
import type { Agent as HttpsAgent } from 'node:https'
import type { WebhookDelivery, WebhookResponse, WebhookSender } from 'zapgate'
import { guardedAgents, type AddressPolicy, type LookupFunction } from 'zapgate/adapter-kit'
import { checkUrl } from 'zapgate/adapter-kit'
import { FairLanes, type LaneLimits } from './fair-lanes.ts'
import { webhookClient } from './got-client.ts'

/** Options of the default webhook sender. */
export interface HttpWebhookOptions {
  /** Allow loopback and private receivers (tests, private deployments). Default false. */
  allowPrivateUrls?: boolean
  /**
   * Which IP addresses may be reached (literal, or resolved at connect time). Default: public
   * addresses only. Ignored with `allowPrivateUrls`. E.g. allow one internal receiver.
   */
  isAllowedAddress?: AddressPolicy
  /** DNS lookup of every connection (default `dns.lookup`): tests map names to addresses with it. */
  lookup?: LookupFunction
  /** Per-attempt timeout, from the call to send() (queue wait and the whole request). Default 15 s; a delivery's own `deadline` may shorten it. */
  timeoutMs?: number
  /** Deliveries in flight per receiver host, so one slow receiver cannot stall the others (nor be flooded). Default 8; at most `concurrency` - 1 (a larger value is lowered to it). */
  concurrencyPerHost?: number
  /**
   * Deliveries in flight per device (its `deviceId`; by URL without one) to one receiver host, so a
   * device whose receiver hangs leaves the host's other slots to the other devices. Default half of
   * `concurrencyPerHost`, rounded up. A device whose POST there got no answer (time-out or connection
   * error; not a delivery dropped unsent) has 1 in flight there until the host answers one of its
   * deliveries (any status): n devices with hung receivers on a host hold n of its slots once each has
   * timed out once, `concurrencyPerDevice` each before.
   */
  concurrencyPerDevice?: number
  /** Deliveries in flight in all, whatever their receiver. Default 256. One host gets at most `concurrencyPerHost` of them, and never all. */
  concurrency?: number
  /** Deliveries waiting per receiver host beyond those in flight; more fail at once ("busy"). Default 1000. */
  maxQueuedPerHost?: number
}

/** Why a delivery was not begun: its `mayBegin` said no. */
const NOT_HELD = 'not begun: this process may no longer hold the event'

/** Response bytes read before the connection is dropped (the status is all that matters). */
const MAX_RESPONSE_BYTES = 64 * 1024

/**
 * The default WebhookSender: one POST per call with got (no redirects, no retries of its own: the
 * outbox retries), at most `concurrencyPerDevice` in flight per device and `concurrencyPerHost` per
 * receiver host, fair between the devices of a host (FairLanes, on p-queue), private and loopback
 * targets refused (on the URL, and after DNS at connect time) unless allowed. The response body is read up
 * to 64 KiB and dropped. A delivery's `signal` cancels it, queued or in flight.
 */
export function httpWebhookSender(options: HttpWebhookOptions = {}): WebhookSender {
  const allowPrivate = options.allowPrivateUrls ?? false
  const isAllowedAddress: AddressPolicy | undefined = allowPrivate ? () => true : options.isAllowedAddress
  const timeoutMs = options.timeoutMs ?? 15_000
  const overall = options.concurrency ?? 256
  // One host never holds every slot of the sender: at most all but one, so other receivers keep a way through.
  const perHost = Math.max(1, Math.min(options.concurrencyPerHost ?? 8, overall - 1))
  const limits: LaneLimits = {
    perHost,
    perDevice: options.concurrencyPerDevice ?? Math.ceil(perHost / 2),
    overall,
    maxWaitingPerHost: options.maxQueuedPerHost ?? 1_000,
  }
  let clients: Promise<Clients> | undefined
  let closed = false

  /** The requests in flight under each signal; its one listener destroys them when it aborts. */
  const inFlight = new WeakMap<AbortSignal, Set<{ destroy(error?: Error): void }>>()
  function streamsOf(signal: AbortSignal): Set<{ destroy(error?: Error): void }> {
    let streams = inFlight.get(signal)
    if (!streams) {
      const created = new Set<{ destroy(error?: Error): void }>()
      signal.addEventListener(
        'abort',
        () => {
          for (const stream of created) stream.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'))
          created.clear()
        },
        { once: true },
      )
      inFlight.set(signal, (streams = created))
    }
    return streams
  }

  return {
    accepts(url: string): boolean {
      return 'url' in checkUrl(url, { allowPrivate, isAllowedAddress })
    },
    async send(delivery: WebhookDelivery): Promise<WebhookResponse> {
      if (closed) throw new Error('the webhook sender is closed')
      const checked = checkUrl(delivery.url, { allowPrivate, isAllowedAddress })
      if ('refused' in checked) throw new Error(`webhook URL refused (${checked.refused})`)
      clients ??= loadClients(isAllowedAddress, options.lookup, limits)
      const loaded = await clients
      const { signal } = delivery
      // The time-out runs from now, waiting in the queue included: a delivery still queued at its
      // deadline is dropped unsent, so a POST the gateway has given up on never goes out later.
      const deadline = Math.min(delivery.deadline ?? Infinity, Date.now() + timeoutMs)
      // The signal is not handed to p-queue or got: each would listen to it once per delivery, and an
      // AbortSignal listener costs more than the POST. One listener per signal ends what it covers.
      // send() answers on the status; the slot is held until the response is over, so a receiver slow
      // to end its answers gets at most `perHost` connections, not one per delivery.
      // A POST that went out and got no status (time-out, connection error; not one cancelled by its
      // signal) narrows its device to 1 in flight to that host; any status widens it back.
      const { lanes } = loaded
      const host = checked.url.host
      const device = delivery.deviceId ?? delivery.url
      return new Promise<WebhookResponse>((resolve, reject) => {
        const answered = (response: WebhookResponse) => {
          lanes.widen(host, device)
          resolve(response)
        }
        lanes
          .run(host, device, () => {
            if (signal?.aborted) throw signal.reason
            if (delivery.closing?.aborted) throw delivery.closing.reason // the gateway is stopping: a POST begun now could be cut and sent twice
            if (delivery.mayBegin?.() === false) throw new Error(NOT_HELD) // this process may no longer hold the event (its heartbeat was late)
            const left = Math.floor(deadline - Date.now())
            if (left <= 0) throw new Error(`no answer within the time-out: still queued behind other deliveries to ${host}`)
            return postOnce(loaded, checked.url, delivery, { deadline, answered, cancellable: signal && streamsOf(signal) }).catch(error => {
              if (!signal?.aborted) lanes.narrow(host, device)
              throw error
            })
          })
          .catch(reject)
      })
    },
    async close() {
      closed = true
      const loaded = await clients
      await loaded?.lanes.onIdle()
      for (const agents of [loaded?.agent, loaded?.fresh]) {
        agents?.http.destroy()
        agents?.https.destroy()
      }
    },
  }
}

// --- Internal helpers ---

type Clients = {
  got: typeof import('got').default
  lanes: FairLanes
  agent: { http: HttpAgent; https: HttpsAgent }
  /** Agents that never keep a connection: the one retry of a POST whose kept-alive connection was stale. */
  fresh: { http: HttpAgent; https: HttpsAgent }
}

async function loadClients(isAllowedAddress: AddressPolicy | undefined, lookup: LookupFunction | undefined, limits: LaneLimits): Promise<Clients> {
  const [{ default: baseGot }, { default: PQueueClass }] = await Promise.all([import('got'), import('p-queue')])
  const agent = guardedAgents({ isAllowedAddress, lookup })
  const got = webhookClient(baseGot, agent)
  const fresh = guardedAgents({ isAllowedAddress, lookup, keepAlive: false })
  return { got, lanes: new FairLanes(PQueueClass, limits), agent, fresh }
}

/** What one POST needs besides the client, the URL and the delivery. */
interface PostOptions {
  /** When the attempt must be over (ms since the epoch). */
  deadline: number
  /** Gets the status as soon as the response head arrives. */
  answered: (response: WebhookResponse) => void
  cancellable?: Set<{ destroy(error?: Error): void }>
  /** Through agents that open a new connection (the retry of a stale one). */
  fresh?: boolean
}

/**
 * POST once: `answered` gets the status as soon as the response head arrives; resolves once the
 * response is over (its body drained, dropped past 64 KiB, or cut by the time-out), rejects when
 * there was no answer. A kept-alive connection the receiver had closed (ECONNRESET or EPIPE on a
 * reused socket before any byte of an answer: the receiver never saw the POST) is no attempt: the
 * POST goes again at once, once, on a new connection, within the same deadline and slot; while the
 * gateway is closing it rejects with the `closing` reason instead, as a POST not begun.
 */
function postOnce(clients: Clients, url: URL, delivery: WebhookDelivery, options: PostOptions): Promise<void> {
  const { cancellable, answered } = options
  return new Promise<void>((resolve, reject) => {
    // No redirects, no retries of got's own, any status answered (set on the client in loadClients).
    const timeout = { request: Math.max(1, Math.floor(options.deadline - Date.now())) }
    const agent = options.fresh ? { agent: clients.fresh } : {}
    // Signed as the POST begins (after the queue, and again for the retry on a new connection): the timestamp is the POST's.
    const headers = delivery.freshHeaders?.() ?? delivery.headers
    const stream = clients.got.stream.post(url, { body: delivery.body, headers, timeout, ...agent })
    if (cancellable) {
      // A got stream whose body was given as an option never emits 'close' unless destroyed (its
      // writable side stays open), so it leaves the set when its response ends or it fails.
      cancellable.add(stream)
      const forget = () => cancellable.delete(stream)
      stream.once('end', forget)
      stream.once('error', forget)
      stream.once('close', forget)
    }
    let status: number | undefined
    let bytes = 0
    // Bytes the connection had read when this request got it: any more read by a failure means the receiver began an answer (it read the POST).
    let socket: { bytesRead: number } | undefined
    let readBefore = 0
    stream.once('request', (request: ClientRequest) =>
      request.once('socket', connection => {
        socket = connection
        readBefore = connection.bytesRead
      }),
    )
    stream.once('response', response => {
      status = response.statusCode
      const retryAfter = response.headers['retry-after']
      answered({ status: response.statusCode, ...(retryAfter ? { retryAfter: String(retryAfter) } : {}) })
    })
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length
      if (bytes > MAX_RESPONSE_BYTES) stream.destroy()
    })
    let settled = false
    const over = (error?: Error) => {
      if (settled) return
      settled = true
      if (status !== undefined) return resolve()
      const code = (error as { code?: unknown } | undefined)?.code
      const answerBegun = socket !== undefined && socket.bytesRead > readBefore
      const stale = !options.fresh && !answerBegun && stream.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE') && Date.now() < options.deadline
      // Stale, and the gateway is stopping: no new POST, and none was read: like a POST not begun (sent after the restart).
      if (stale && !delivery.signal?.aborted && delivery.closing?.aborted) return reject(delivery.closing.reason)
      if (stale && delivery.mayBegin?.() === false) return reject(new Error(NOT_HELD)) // none was read: not begun, as above
      if (stale && !delivery.signal?.aborted) return resolve(postOnce(clients, url, delivery, { ...options, fresh: true }))
      reject(error ?? new Error('the connection closed without an answer'))
    }
    stream.once('end', () => over())
    stream.once('close', () => over())
    stream.once('error', over)
  })
}
