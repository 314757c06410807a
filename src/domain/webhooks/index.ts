/** The webhook outbox: record each event durably, deliver it at least once, signed (public names only). */
export { WebhookOutbox, startWebhookOutbox, type WebhookAdmin } from './outbox.ts'
export type { DeadLetter, DeadLetterReason } from './outbox-store.ts'
export type { WebhookPayload, WebhookEventName } from './payload.ts'
