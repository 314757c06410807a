/** Webhook delivery settings after defaults (the options and their defaults: src/options.ts). */
export interface WebhookSettings {
  retryMs: number[]
  maxAgeMs: number
  timeoutMs: number
  /** Attempts in flight per device (the default sender also bounds them per receiver host). */
  concurrencyPerDevice: number
  /** Pending deliveries held in the in-memory timetable at once; the rest wait in storage. */
  timetableCapacity: number
  /** Due deliveries waiting per device for a free slot; the rest wait in storage. */
  lineLimit: number
  /** How often each instance rescans the outbox for records it owns but has not scheduled. */
  reconcileMs: number
}
