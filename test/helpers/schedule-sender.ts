/**
 * One gateway process's scheduler for test/domain/messaging/scheduler-paused-sender.test.ts and
 * scheduler-rejoin-takeover.test.ts: joins the
 * instance registry on STORE_URL (namespace STORE_NAMESPACE; heartbeat 200 ms, ttl 1.5 s, cluster
 * mode) and sends device d1's scheduled items through a real Messenger and send queue paced by
 * MIN_INTERVAL_MS, over a transport that prints `network <text>` for each message it puts on the
 * network. With WARM_UP set it first sends one message of its own (so a scheduled one waits
 * MIN_INTERVAL_MS in the device's queue after its claim). Prints `instance <id>` once started, and
 * `performed ok` or `performed failed <code or message>` for each scheduled send. Not a test by itself.
 * Optional: HEARTBEAT_MS and TTL_MS (its registry timing), POLL_MS (its store rescan period, default 200 ms),
 * `rejoined` is printed when it first registers again after a pause (its fence lifted);
 * SCHEDULE_ON_REJOIN (a text it then schedules, due at once: `scheduled` or `schedule failed <code or message>`),
 * HOLD (texts, comma-separated, whose transport send, once it printed `network <text>`, answers only when the process
 * next gets SIGUSR2: the network took it, its answer is slow; a held warm-up is not waited for before the scheduler starts),
 * DEFER_START=1 (its scheduler starts, and first scans the store, only when the process gets SIGUSR2),
 * HOLD_TAKEOVER=1 (its first takeover of a claim, once its read of the holder's instance record found it gone,
 * prints `takeover held` and goes on, to its compare-and-set, only when the process gets SIGUSR2: a stall of that process),
 * CLUSTER=0 (outside cluster mode: it starts once a live instance's heartbeat lapsed).
 */
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import type { Device, Devices } from '../../src/domain/devices.ts'
import { Instances, type Liveness } from '../../src/domain/instances.ts'
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
const instances = new Instances(
  storage,
  lock,
  { heartbeatMs: Number(process.env.HEARTBEAT_MS ?? 200), ttlMs: Number(process.env.TTL_MS ?? 1_500) },
  silentLogger,
)
await instances.start(process.env.CLUSTER !== '0')
const events = new GatewayEvents()
let sent = 0
const signalled = new Promise<void>(resolve => process.on('SIGUSR2', resolve))
const nextSignal = () => new Promise<void>(resolve => process.once('SIGUSR2', () => resolve()))
const held = new Set(process.env.HOLD?.split(','))
const transport = {
  async send(_deviceId: string, _to: string, message: { kind: string; text?: string }) {
    console.log(`network ${message.text}`)
    if (held.has(message.text!)) await nextSignal()
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
const timing = { retryMs: [60_000], pollMs: Number(process.env.POLL_MS ?? 200), leaseMs: 90_000, maxWaitMs: 600_000 }
const view = instances.view
let takeoverHeld = !process.env.HOLD_TAKEOVER
const confirmGone = async (id: string) => {
  const gone = await view.confirmGone(id)
  if (gone && !takeoverHeld) ((takeoverHeld = true), console.log('takeover held'), await nextSignal())
  return gone
}
const liveness: Liveness = { id: view.id, isAlive: id => view.isAlive(id), onDeparture: listener => view.onDeparture(listener), confirmGone }
// As src/wiring.ts wires it, in and outside cluster mode: a send begins only if its claim was made unfenced and no fence was raised since.
const scheduler = createScheduler(store, messenger, { devices, accounts, liveness, fence: instances }, timing, silentLogger)
if (process.env.WARM_UP) {
  const warmUp = perform(device, { kind: 'send', to: '5511988880002', message: { kind: 'text', text: 'warm-up' } })
  if (!held.has('warm-up')) await warmUp
}
if (process.env.DEFER_START) void signalled.then(() => scheduler.start())
else scheduler.start()
console.log(`instance ${instances.id}`)
const onRejoin = process.env.SCHEDULE_ON_REJOIN
instances.events.once('rejoin', () => {
  console.log('rejoined')
  if (onRejoin) {
    const action = { kind: 'send' as const, to: '5511988880002', message: { kind: 'text' as const, text: onRejoin } }
    scheduler.schedule(device, action, { at: Date.now(), text: '2030-01-01 00:00:00' }).then(
      () => console.log('scheduled'),
      err => console.log(`schedule failed ${(err as { code?: string }).code ?? (err as Error).message}`),
    )
  }
})
