/**
 * One gateway process's scheduler for test/domain/messaging/scheduler-paused-sender.test.ts: joins the
 * instance registry on STORE_URL (namespace STORE_NAMESPACE; heartbeat 200 ms, ttl 1.5 s, cluster
 * mode) and sends device d1's scheduled items through a real Messenger and send queue paced by
 * MIN_INTERVAL_MS, over a transport that prints `network <text>` for each message it puts on the
 * network. With WARM_UP set it first sends one message of its own (so a scheduled one waits
 * MIN_INTERVAL_MS in the device's queue after its claim). Prints `instance <id>` once started, and
 * `performed ok` or `performed failed <code or message>` for each scheduled send. Not a test by itself.
 */
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import type { Device, Devices } from '../../src/domain/devices.ts'
import { Instances } from '../../src/domain/instances.ts'
import { messageFeed } from '../../src/domain/message-feed.ts'
import { Messenger } from '../../src/domain/messaging/messenger.ts'
import { createScheduleStore } from '../../src/domain/messaging/schedule-store.ts'
import { createScheduler } from '../../src/domain/messaging/scheduler.ts'
import { SendQueues } from '../../src/domain/messaging/send-queue.ts'
import { GatewayEvents } from '../../src/events.ts'
import { silentLogger } from '../../src/logger.ts'
import { requireAtomic } from '../../src/ports/storage.ts'
import type { Transport } from '../../src/ports/transport.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'

const storage = requireAtomic(await storageFromUrl(process.env.STORE_URL!, { namespace: process.env.STORE_NAMESPACE }), 'schedule sender')
const lock = new KeyedLock()
const instances = new Instances(storage, lock, { heartbeatMs: 200, ttlMs: 1_500 }, silentLogger)
await instances.start(true)
const events = new GatewayEvents()
let sent = 0
const transport = {
  async send(_deviceId: string, _to: string, message: { kind: string; text?: string }) {
    console.log(`network ${message.text}`)
    return { id: `${process.pid}-${++sent}`, timestamp: Date.now() }
  },
  statusNow: () => ({ connected: true, state: 'open' }),
} as unknown as Transport
const queues = new SendQueues({ sendTimeoutMs: 30_000, minIntervalMs: Number(process.env.MIN_INTERVAL_MS ?? 0), intervalJitterMs: 0, sendQueueLimit: 10 })
const messenger = new Messenger(transport, queues, messageFeed(events, silentLogger), silentLogger, events)
const perform = messenger.perform.bind(messenger)
messenger.perform = (...args) =>
  perform(...args).then(
    id => (console.log('performed ok'), id),
    err => {
      console.log(`performed failed ${(err as { code?: string }).code ?? (err as Error).message}`)
      throw err
    },
  )
const device = { id: 'd1', accountId: 'a1', linked: true } as Device
const devices = { get: async () => device, load: async () => device, status: async () => ({ connected: true, state: 'open' }) } as unknown as Devices
const accounts = { get: async () => ({}), active: () => true } as never
const store = createScheduleStore(storage, lock)
const timing = { retryMs: [60_000], pollMs: 200, leaseMs: 90_000, maxWaitMs: 600_000 }
const scheduler = createScheduler(store, messenger, { devices, accounts, liveness: instances.view }, timing, silentLogger)
if (process.env.WARM_UP) await perform(device, { kind: 'send', to: '5511988880002', message: { kind: 'text', text: 'warm-up' } })
scheduler.start()
console.log(`instance ${instances.id}`)
