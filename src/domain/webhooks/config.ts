import { DEFAULT_MAX_AGE_MS, DEFAULT_RETRY_MS, checkRetryDelays } from './retry.ts'

/** createGateway options of webhook delivery (part of GatewayOptions). */
export interface WebhookOptions {
  /**
   * Delays between attempts, in ms; past the last one it repeats until `webhookMaxAgeMs`. Each gets
   * ±20 % jitter. Default 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h.
   */
  webhookRetryMs?: readonly number[]
  /** Age after which an undelivered event moves to the dead letters. Default 72 h. */
  webhookMaxAgeMs?: number
  /** Time-out of one attempt (also given to the default sender). Default 15 s. */
  webhookTimeoutMs?: number
}

/** Webhook delivery settings after defaults. */
export interface WebhookSettings {
  retryMs: number[]
  maxAgeMs: number
  timeoutMs: number
  /** Attempts in flight per device (the default sender also bounds them per receiver host). */
  concurrencyPerDevice: number
  /** Pending deliveries held in the in-memory timetable at once; the rest wait in storage (see DeliveryTimetable). */
  timetableCapacity: number
  /** Due deliveries waiting per device for a free slot; the rest wait in storage (see DeliveryLoop). */
  lineLimit: number
  /** How often each instance rescans the outbox for records it owns but has not scheduled (see DeliveryLoop). */
  reconcileMs: number
}

/** Attempts in flight per device. */
const CONCURRENCY_PER_DEVICE = 8

/** Pending deliveries held in the in-memory timetable at once (about 100 bytes each). */
const TIMETABLE_CAPACITY = 10_000

/** Due deliveries waiting in memory per device for a free slot. */
const LINE_LIMIT = 256

/** Outbox rescans: a record written behind its owner's back waits at most this long (one scan of the outbox each). */
const RECONCILE_MS = 60_000

/** Fill in the defaults of the webhook options; throws a clear Error for a bad value. */
export function resolveWebhookOptions(options: WebhookOptions): WebhookSettings {
  const maxAgeMs = options.webhookMaxAgeMs ?? DEFAULT_MAX_AGE_MS
  const timeoutMs = options.webhookTimeoutMs ?? 15_000
  if (!(maxAgeMs > 0) || !Number.isFinite(maxAgeMs)) throw new Error('createGateway: webhookMaxAgeMs must be a positive number of ms')
  if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs)) throw new Error('createGateway: webhookTimeoutMs must be a positive number of ms')
  return {
    retryMs: checkRetryDelays(options.webhookRetryMs ?? DEFAULT_RETRY_MS),
    maxAgeMs,
    timeoutMs,
    concurrencyPerDevice: CONCURRENCY_PER_DEVICE,
    timetableCapacity: TIMETABLE_CAPACITY,
    lineLimit: LINE_LIMIT,
    reconcileMs: RECONCILE_MS,
  }
}
