import type { Registry } from 'prom-client'
import type { GatewayEventMap } from './events.ts'
import type { SessionState } from './ports/transport.ts'
import type { DeviceLeases } from './domain/cluster/device-leases.ts'
import type { Devices } from './domain/devices.ts'
import type { Messaging } from './domain/messaging/index.ts'
import type { GatewayEvents } from './events.ts'
import type { Logger } from './logger.ts'
import type { WebhookAdmin } from './domain/webhooks/outbox.ts'
import { importOptional } from './optional-package.ts'

/** What the metrics count and read at scrape time. */
export interface MetricsDeps {
  events: GatewayEvents
  leases: DeviceLeases
  devices: Devices
  messaging: Messaging
  logger: Logger
}

/** The gateway's Prometheus metrics: the Registry they live in, and how to stop counting. */
export interface GatewayMetrics {
  /** The prom-client Registry the gateway fills (its own unless one was given). */
  registry: Registry
  /** Text exposition of every metric (what `GET /metrics` answers) and its content type. */
  scrape(): Promise<{ contentType: string; text: string }>
  /** Stop listening to the gateway's events; a host's Registry loses the gateway's metrics (its own keeps them). */
  close(): void
}

/** Every metric the gateway exposes, by name (docs/api.md lists them). */
export const METRIC_NAMES = [
  'zapgate_http_requests_total',
  'zapgate_http_request_duration_seconds',
  'zapgate_sends_total',
  'zapgate_send_failures_total',
  'zapgate_webhook_deliveries_total',
  'zapgate_webhook_failed_attempts_total',
  'zapgate_webhook_retries_total',
  'zapgate_webhook_dead_letters_total',
  'zapgate_webhook_outbox_pending',
  'zapgate_devices',
  'zapgate_devices_held',
  'zapgate_lease_takeovers_total',
  'zapgate_forwarded_requests_total',
  'zapgate_scheduled_messages',
  'zapgate_scheduled_messages_due',
] as const

/**
 * Count what the gateway does into a prom-client Registry of its own (never the global default, so
 * several gateways in one process do not clash): requests, sends, webhook deliveries from the
 * gateway's events; outbox depth, devices by state and the scheduler's backlog read from the store
 * at scrape time (a scan of each: keep the scrape interval at tens of seconds for large stores; scrapes
 * that come while a scan runs share it, so scrapers at once cost the store one scan of each).
 * prom-client (an optional peer package) is loaded only when metrics are on; without it, start-up
 * fails with an error naming it.
 */
export async function startMetrics(services: MetricsDeps, webhooks: WebhookAdmin, registry?: Registry): Promise<GatewayMetrics> {
  const prom = await importOptional('prom-client', 'The metrics option', () => import('prom-client'), '^15')
  const register = registry ?? new prom.Registry()
  // Checked before any is registered: a Registry holding one of them (another gateway's) gets none of this one's.
  const taken = METRIC_NAMES.find(name => register.getSingleMetric(name) !== undefined)
  if (taken)
    throw new Error(
      `createGateway: the metrics Registry already holds ${taken} (another gateway's): two gateways cannot fill one Registry; give each its own (metrics: true, each serving /metrics under its mount), or close the other first`,
    )
  const registers = [register]
  const { events, devices, messaging, logger, leases } = services

  const requests = new prom.Counter({
    name: 'zapgate_http_requests_total',
    help: 'Requests answered, by route, operation and answer status.',
    labelNames: ['route', 'operation', 'status'],
    registers,
  })
  const duration = new prom.Histogram({
    name: 'zapgate_http_request_duration_seconds',
    help: 'Time to answer a request, by route and operation.',
    labelNames: ['route', 'operation'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  })
  const sends = new prom.Counter({
    name: 'zapgate_sends_total',
    help: 'Network actions of devices (sends, reactions, deletions, read receipts), by kind and result.',
    labelNames: ['kind', 'result'],
    registers,
  })
  const sendFailures = new prom.Counter({
    name: 'zapgate_send_failures_total',
    help: 'Failed network actions, by kind and reason (the error code of the transport or the gateway).',
    labelNames: ['kind', 'reason'],
    registers,
  })
  const deliveries = new prom.Counter({ name: 'zapgate_webhook_deliveries_total', help: 'Webhook events delivered (2xx).', registers })
  const failedAttempts = new prom.Counter({
    name: 'zapgate_webhook_failed_attempts_total',
    help: 'Webhook attempts that failed and will be retried.',
    registers,
  })
  const retries = new prom.Counter({ name: 'zapgate_webhook_retries_total', help: 'Webhook attempts after the first one of their event.', registers })
  const deadLetters = new prom.Counter({
    name: 'zapgate_webhook_dead_letters_total',
    help: 'Webhook events moved to the dead letters, by reason.',
    labelNames: ['reason'],
    registers,
  })
  const takeovers = new prom.Counter({
    name: 'zapgate_lease_takeovers_total',
    help: 'Device leases this instance took over from another instance (gone, or having handed it back).',
    registers,
  })
  const forwarded = new prom.Counter({
    name: 'zapgate_forwarded_requests_total',
    help: 'Operations forwarded to the instance holding their device, by result (answered, or failed: 503).',
    labelNames: ['result'],
    registers,
  })
  new prom.Gauge({
    name: 'zapgate_devices_held',
    help: 'Device sessions this instance holds (its leases).',
    registers,
    collect() {
      this.set(leases.count)
    },
  })

  // Each store scan is shared while it runs: by both scheduler gauges (prom-client collects concurrently), and by every scrape that comes meanwhile.
  const readPending = sharedWhileRunning(() => webhooks.pending())
  const readDevices = sharedWhileRunning(async () => {
    const counts: Record<SessionState, number> = { closed: 0, connecting: 0, linking: 0, open: 0, replaced: 0, 'logged-out': 0 }
    for await (const device of devices.all()) counts[device.state] = (counts[device.state] ?? 0) + 1
    return counts
  })
  const readBacklog = sharedWhileRunning(() => messaging.scheduler.backlog())

  new prom.Gauge({
    name: 'zapgate_webhook_outbox_pending',
    help: 'Webhook events waiting for delivery (outbox depth).',
    registers,
    async collect() {
      await readOrKeep(readPending, count => this.set(count))
    },
  })
  new prom.Gauge({
    name: 'zapgate_devices',
    help: 'Devices by the last known state of their session.',
    labelNames: ['state'],
    registers,
    async collect() {
      await readOrKeep(readDevices, counts => {
        for (const [state, count] of Object.entries(counts)) this.set({ state }, count)
      })
    },
  })
  new prom.Gauge({
    name: 'zapgate_scheduled_messages',
    help: 'Scheduled messages in the store, by state (pending, failed).',
    labelNames: ['state'],
    registers,
    async collect() {
      await readOrKeep(readBacklog, counts => {
        this.set({ state: 'pending' }, counts.pending)
        this.set({ state: 'failed' }, counts.failed)
      })
    },
  })
  new prom.Gauge({
    name: 'zapgate_scheduled_messages_due',
    help: 'Pending scheduled messages already due (the scheduler backlog).',
    registers,
    async collect() {
      await readOrKeep(readBacklog, counts => this.set(counts.due))
    },
  })

  const onRequest = ({ route, operation = 'none', status, durationMs }: GatewayEventMap['request'][0]) => {
    requests.inc({ route, operation, status: String(status) })
    duration.observe({ route, operation }, durationMs / 1000)
  }
  const onSend = ({ kind, ok, reason }: GatewayEventMap['send'][0]) => {
    sends.inc({ kind, result: ok ? 'sent' : 'failed' })
    if (!ok) sendFailures.inc({ kind, reason: reason ?? 'error' })
  }
  const onDelivery = ({ attempt }: GatewayEventMap['delivery'][0]) => {
    deliveries.inc()
    if (attempt > 1) retries.inc()
  }
  // A final event is a dead letter, whether an attempt (a retry too) ended it or none did.
  const onDeliveryFailed = ({ attempt, final, reason, attempted }: GatewayEventMap['delivery-failed'][0]) => {
    if (final) deadLetters.inc({ reason: reason ?? 'unknown' })
    else failedAttempts.inc()
    if (attempt > 1 && (!final || attempted)) retries.inc()
  }
  const onLease = ({ from }: GatewayEventMap['lease'][0]) => void (from && takeovers.inc())
  const onForward = ({ ok }: GatewayEventMap['forward'][0]) => forwarded.inc({ result: ok ? 'answered' : 'failed' })
  events.on('lease', onLease)
  events.on('forward', onForward)
  events.on('request', onRequest)
  events.on('send', onSend)
  events.on('delivery', onDelivery)
  events.on('delivery-failed', onDeliveryFailed)

  /** Run a store read for a gauge; when the store fails, keep the last value (health reports the store). */
  async function readOrKeep<T>(read: () => Promise<T>, apply: (value: T) => void): Promise<void> {
    try {
      apply(await read())
    } catch (err) {
      logger.warn({ err }, 'metrics: store read failed, keeping the last value')
    }
  }

  return {
    registry: register,
    async scrape() {
      return { contentType: register.contentType, text: await register.metrics() }
    },
    close() {
      events.off('request', onRequest)
      events.off('send', onSend)
      events.off('delivery', onDelivery)
      events.off('delivery-failed', onDeliveryFailed)
      events.off('lease', onLease)
      events.off('forward', onForward)
      // A host's Registry outlives the gateway: it keeps no metric of a closed one (stale, read from a closed store), and a new gateway can fill it.
      if (registry) for (const name of METRIC_NAMES) register.removeSingleMetric(name)
    },
  }
}

/** `read`, its calls merged while one runs: a call that comes meanwhile gets that run's answer (or error); the next call after it reads again. */
function sharedWhileRunning<T>(read: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined
  return () => (running ??= read().finally(() => (running = undefined)))
}
