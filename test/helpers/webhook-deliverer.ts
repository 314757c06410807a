/**
 * One gateway process's webhook outbox for test/domain/webhooks/outbox-paused-sender.test.ts: joins
 * the instance registry on STORE_URL (namespace STORE_NAMESPACE; heartbeat 200 ms, ttl 1.5 s, cluster
 * mode) and delivers device d1's events to RECEIVER_URL through the default HTTP sender (its queue:
 * PER_DEVICE POSTs of a device at once, default 4; attempt time-out 30 s). With RECORD set (texts,
 * comma-separated) it records an incoming text event of d1 for each, in order, each once the sender was called for the one before. Prints `instance <id>`
 * once started, and `sender <text> <status or error>` as each call to the sender settles. Not a test by itself.
 * Optional: HEARTBEAT_MS and TTL_MS (its registry timing), RECONCILE_MS (its outbox rescan period, default 60 s),
 * RECORD_ON_REJOIN (a text recorded each time it registers again after a pause: `rejoined` printed first), CLUSTER=0 (outside
 * cluster mode, wired as src/wiring.ts wires a gateway without the cluster option).
 */
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { httpWebhookSender } from '../../adapters/webhook-http/index.ts'
import type { Devices } from '../../src/domain/devices.ts'
import { Instances } from '../../src/domain/instances.ts'
import { WebhookOutbox } from '../../src/domain/webhooks/outbox.ts'
import { GatewayEvents } from '../../src/events.ts'
import { silentLogger } from '../../src/logger.ts'
import { requireAtomic } from '../../src/ports/storage.ts'
import type { WebhookSender } from '../../src/ports/webhooks.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'
import { device, message, settings } from './outbox.ts'

const storage = requireAtomic(await storageFromUrl(process.env.STORE_URL!, { namespace: process.env.STORE_NAMESPACE }), 'webhook deliverer')
const lock = new KeyedLock()
const instances = new Instances(
  storage,
  lock,
  { heartbeatMs: Number(process.env.HEARTBEAT_MS ?? 200), ttlMs: Number(process.env.TTL_MS ?? 1_500) },
  silentLogger,
)
const cluster = process.env.CLUSTER !== '0'
await instances.start(cluster)
const http = httpWebhookSender({ allowPrivateUrls: true, timeoutMs: 30_000, concurrencyPerDevice: Number(process.env.PER_DEVICE ?? 4) })
/** Texts the sender was called for, and who waits for each. */
const called = new Map<string, () => void>()
const sender: WebhookSender = {
  send(delivery) {
    const text = JSON.parse(delivery.body).text
    called.get(text)?.()
    return http.send(delivery).then(
      answer => (console.log(`sender ${text} ${answer.status}`), answer),
      err => {
        console.log(`sender ${text} ${(err as Error).message}`)
        throw err
      },
    )
  },
}
const d1 = { ...device('d1'), webhookUrl: process.env.RECEIVER_URL! }
const devices = { get: async (id: string) => (id === 'd1' ? d1 : undefined), peek: (id: string) => (id === 'd1' ? d1 : undefined) } as unknown as Devices
const outbox = new WebhookOutbox({
  ...{ storage, lock, devices, sender, events: new GatewayEvents(), logger: silentLogger },
  ...{
    settings: settings({ timeoutMs: 30_000, concurrencyPerLane: 8, retryMs: [60_000], reconcileMs: Number(process.env.RECONCILE_MS ?? 60_000) }),
    liveness: instances.view,
    fence: instances, // as src/wiring.ts, in and outside cluster mode
  },
})
await outbox.start()
console.log(`instance ${instances.id}`)
const onRejoin = process.env.RECORD_ON_REJOIN
if (onRejoin) instances.events.on('rejoin', () => (console.log('rejoined'), void outbox.record(d1, message(onRejoin))))
// Each recorded once the sender was called for the one before (so the second waits in its queue behind the first).
for (const text of process.env.RECORD ? process.env.RECORD.split(',') : []) {
  const sent = new Promise<void>(resolve => called.set(text, resolve))
  await outbox.record(d1, message(text))
  await sent
}
