import type { Agent as HttpAgent } from 'node:http'
import type { Agent as HttpsAgent } from 'node:https'
import type { WebhookDelivery, WebhookResponse, WebhookSender } from '../../src/ports/webhooks.ts'
import { checkUrl } from '../../src/security/url-policy.ts'

/** Options of the default webhook sender. */
export interface HttpWebhookOptions {
  /** Allow loopback and private receivers (tests, private deployments). Default false. */
  allowPrivateUrls?: boolean
  /** Per-attempt timeout. Default 15 s. */
  timeoutMs?: number
  /** Deliveries in flight per receiver host, so one slow receiver cannot stall the others. Default 8. */
  concurrencyPerHost?: number
}

/**
 * The default WebhookSender: one POST per call with got (no redirects, no retries of its own: the
 * outbox retries), bounded concurrency per receiver host with p-queue, private and loopback targets
 * refused at connect time unless allowed.
 */
export function httpWebhookSender(options: HttpWebhookOptions = {}): WebhookSender {
  const allowPrivate = options.allowPrivateUrls ?? false
  const timeoutMs = options.timeoutMs ?? 15_000
  const perHost = options.concurrencyPerHost ?? 8
  const queues = new Map<string, import('p-queue').default>()
  let clients: Promise<Clients> | undefined

  async function queueFor(host: string) {
    let queue = queues.get(host)
    if (!queue) {
      const { default: PQueue } = await import('p-queue')
      queue = queues.get(host) ?? new PQueue({ concurrency: perHost })
      queues.set(host, queue)
      // Drop idle queues so the map stays as small as the set of busy receivers.
      queue.on('idle', () => queue!.size === 0 && queue!.pending === 0 && queues.delete(host))
    }
    return queue
  }

  return {
    async send(delivery: WebhookDelivery): Promise<WebhookResponse> {
      const checked = checkUrl(delivery.url, { allowPrivate })
      if ('refused' in checked) throw new Error(`webhook URL refused (${checked.refused})`)
      clients ??= loadClients(allowPrivate)
      const { got, agent } = await clients
      const queue = await queueFor(checked.url.host)
      return queue.add(
        async () => {
          const response = await got.post(checked.url, {
            agent,
            body: delivery.body,
            headers: { 'content-type': 'application/json', 'user-agent': 'zapgate-webhooks/1', ...delivery.headers },
            timeout: { request: timeoutMs },
            retry: { limit: 0 },
            followRedirect: false,
            throwHttpErrors: false,
          })
          const retryAfter = response.headers['retry-after']
          return { status: response.statusCode, ...(retryAfter ? { retryAfter: String(retryAfter) } : {}) }
        },
        { throwOnTimeout: true },
      ) as Promise<WebhookResponse>
    },
    async close() {
      await Promise.all([...queues.values()].map(q => q.onIdle()))
      const loaded = await clients
      loaded?.agent?.http.destroy()
      loaded?.agent?.https.destroy()
    },
  }
}

// --- Internal helpers ---

type Clients = { got: typeof import('got').default; agent: { http: HttpAgent; https: HttpsAgent } | undefined }

async function loadClients(allowPrivate: boolean): Promise<Clients> {
  const { default: got } = await import('got')
  if (allowPrivate) return { got, agent: undefined }
  const { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } = await import('request-filtering-agent')
  return { got, agent: { http: new RequestFilteringHttpAgent({ keepAlive: true }), https: new RequestFilteringHttpsAgent({ keepAlive: true }) } }
}
