/**
 * zapgate: an embeddable WhatsApp chatbot messaging gateway for Koa. This entry is what a host app
 * uses: createGateway and its options, the ports it may fill with its own adapters, the errors by
 * code and the webhook check for its receiver. Adapter authors: `zapgate/adapter-kit`; contract
 * suites: `zapgate/testing`; request and answer types of the HTTP API, and a typed client that
 * follows a cluster's holder hint: `zapgate/client`.
 */
export { createGateway, type Gateway, type DeviceSummary } from './gateway.ts'
export { accountAdmin, type AccountAdmin, type AccountSummary } from './account-admin.ts'
export type { GatewayOptions, MessagingOptions, WebhookOptions, ServiceOptions, RateLimitOptions, RateLimitRules, AgentOptions } from './options.ts'
export type { Plan } from './domain/accounts.ts'
export type { WebhookAdmin } from './domain/webhooks/outbox.ts'
export type { DeadLetter, DeadLetterReason } from './domain/webhooks/outbox-store.ts'
export type { WebhookPayload, WebhookEventName } from './domain/webhooks/payload.ts'
export type { RateRule } from './security/rate-counters.ts'
export { GatewayError, type ErrorCode } from './errors.ts'
export { MissingPackageError } from './optional-package.ts'
export type { GatewayEvents, GatewayEventMap, SendKind } from './events.ts'
export type { Logger } from './logger.ts'
export type { Storage, AtomicStorage } from './ports/storage.ts'
export * from './ports/transport.ts'
export type { WebhookSender, WebhookDelivery, WebhookResponse } from './ports/webhooks.ts'
export { MediaFetchError, type MediaFetcher, type FetchedMedia } from './ports/media.ts'
export type { AgentResponder, AgentRequest, AgentReply, AgentContact, AgentTurn } from './ports/agents.ts'
export { verifyWebhook } from './domain/webhooks/signer.ts'
