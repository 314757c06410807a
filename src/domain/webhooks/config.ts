import type { DueSettings } from '../due-work.ts'

/** Webhook delivery settings after defaults (the options and their defaults: src/options.ts); the delivery loop's limits pass straight to DueWork. */
export interface WebhookSettings extends DueSettings {
  retryMs: number[]
  maxAgeMs: number
  timeoutMs: number
}
