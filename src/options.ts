import type { Registry } from 'prom-client'
import type { Logger } from './logger.ts'
import type { AgentResponder } from './ports/agents.ts'
import type { MediaFetcher } from './ports/media.ts'
import type { Storage } from './ports/storage.ts'
import type { Transport } from './ports/transport.ts'
import type { WebhookSender } from './ports/webhooks.ts'
import type { HttpStatusMode } from './http/render.ts'
import type { Plan } from './domain/accounts.ts'
import type { RateRule } from './security/rate-counters.ts'

/**
 * Every option of createGateway, each with its default (DEFAULTS below), resolved once at
 * createGateway by resolveOptions (src/resolve-options.ts): the rest of the gateway reads only the
 * resolved settings.
 */
export interface GatewayOptions {
  /** Where accounts, devices, schedules, the webhook outbox and transport auth state live. Default: in-memory Keyv. */
  storage?: Storage
  /** The messaging network. Default: Baileys (WhatsApp). */
  transport?: Transport
  /** Delivers webhook events. Default: got + p-queue, refusing private addresses unless allowed. */
  webhooks?: WebhookSender
  /** Downloads media URLs given to the send operations. Default: got with the same URL guard. */
  media?: MediaFetcher
  /** A pino-compatible logger. Default: silent. */
  logger?: Logger
  /** `mirror` (default): HTTP code = body `status`; `always200`: HTTP 200, real status in the body. */
  httpStatus?: HttpStatusMode
  /** Plans by id. Default `{ "1": { name: "Gratuito", days: 30 } }`. */
  plans?: Record<string, Plan>
  /** Absolute http(s) URL the gateway is reachable at, for links (default: the request's origin and mount path); one without scheme, or with a query, is refused at start. */
  baseUrl?: string
  /**
   * How long a QR share link (`link` of operations 3 and 4) works, in ms (default 24 h). Once its
   * device has connected it shows no QR again; past this time, or once the device is logged out, it answers 404.
   * At most 365 days (a store ttl: Redis refuses much longer ones); more is refused at start.
   */
  shareLinkTtlMs?: number
  /** Let webhook and media URLs reach loopback and private addresses (default false; a value other than true or false, such as the string 'false', is refused at start). */
  allowPrivateUrls?: boolean
  /** IANA time zone for `agendamento` and `expiracao` (default UTC). */
  timeZone?: string
  /** Largest request body, in bytes or with a unit (`'20mb'`). Default 20 MB (base64 media). */
  bodyLimit?: number | string
  /**
   * How long account, authkey and device records read by requests stay cached in the process
   * (default 2000 ms; 0: read the store on every request). Changes made through the gateway apply at
   * once; a change made by another process sharing the store, or by hand, within this time.
   */
  cacheTtlMs?: number
  /**
   * Folder where incoming events (past 1,000 in memory) and webhook events (past 10,000), or either
   * past 64 MiB, wait while the store is down (created 0700; default `<os tmpdir>/zapgate-spill`). A
   * process started later on this host with the same store replays what a gone one left there (the
   * files are named by the store's id: gateways on other stores may share the folder).
   */
  spillDir?: string
  /** How long one store call may take before the request answers 503 (default 2000 ms). */
  storageTimeoutMs?: number
  /** A request body not received whole within this time is answered 408 and its connection closed (default 30 000 ms). */
  bodyTimeoutMs?: number
  /** How long `close()` waits for the requests in flight to be answered before closing the sessions (default 10 000 ms). */
  shutdownGraceMs?: number
  /**
   * Most bytes of media in flight in this process (downloaded, decoded or being sent), in bytes or
   * with a unit (`'200mb'`, the default); a send that would go past it is answered 429 with `Retry-After`.
   */
  mediaBytesInFlight?: number | string
  /**
   * Processes sharing one store register in it and renew their record every `heartbeatMs` (default
   * 3000); one silent for `ttlMs` (default 15000) is gone, and its claims on webhook events and
   * scheduled messages pass to the others (within about `ttlMs + heartbeatMs`). A `heartbeatMs`
   * past 2^31 - 1 ms (24.8 days, a Node timer's limit) is read as that.
   */
  instances?: { heartbeatMs?: number; ttlMs?: number }
  /**
   * Cluster mode: several instances on one Redis or PostgreSQL store, any of them answering any
   * request (forwarded to the instance holding the device). `secret` authenticates the instances to
   * each other; `advertiseUrl` is where the others reach this one (its mount point; not on a port
   * `fetch` refuses, such as 6000 or 5060: refused at start); `maxDevices` caps the device sessions
   * this instance holds.
   */
  cluster?: { secret: string; advertiseUrl: string; maxDevices?: number }

  // Webhook delivery (WebhookOptions)
  /** Delays between attempts, in ms; past the last one it repeats until `webhookMaxAgeMs`. Each gets ±20 % jitter. Default 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h. */
  webhookRetryMs?: readonly number[]
  /** Age after which an undelivered event moves to the dead letters. Default 72 h. */
  webhookMaxAgeMs?: number
  /** Time-out of one attempt (also given to the default sender). Default 15 s. */
  webhookTimeoutMs?: number

  // Agents (AgentOptions)
  /** Answers incoming texts on devices with an agent (an object with `respond`, or the function itself). Default: none (agents stay silent). */
  agentResponder?: AgentResponder | AgentResponder['respond']
  /** How long a reply may take before the gateway gives up on it. Default 30 s. */
  agentTimeoutMs?: number
  /** Turns kept per flow conversation (contact and agent turns count one each). Default 20. */
  agentHistoryLimit?: number

  // Messaging: media, the per-device send queue, scheduling and OTP (MessagingOptions)
  /** Largest media file (URL download, base64 or upload), in bytes or with a unit (`'16mb'`). Default 16 MB. */
  mediaMaxBytes?: number | string
  /** Time allowed to download a media URL. Default 30 000 ms. */
  mediaTimeoutMs?: number
  /** A send answers within this time: still queued it is dropped, under way it is reported as stalled (504). Default 30 000 ms. */
  sendTimeoutMs?: number
  /** Pause between two sends of one device (pacing against bans). Default 0. */
  minIntervalMs?: number
  /** Random extra pause, 0 to this many ms, added to `minIntervalMs`. Default 0. */
  intervalJitterMs?: number
  /** Most sends waiting in one device's queue (a whole number); more are answered 429. Default 1 000. */
  sendQueueLimit?: number
  /** Delays before retrying a failed scheduled send; after the last one it is marked failed. Default 1 min, 5 min, 15 min. */
  scheduleRetryMs?: number[]
  /** How often the scheduler re-reads the store (new items of other processes, retries). Default 15 000 ms; more than 2^31 - 1 ms (24.8 days, a Node timer's limit) is read as that. */
  schedulePollMs?: number
  /** How long a scheduled message due while its device is not connected waits for it before it is marked failed (default 24 h). */
  scheduleMaxWaitMs?: number
  /** Most scheduled messages an account keeps pending, and most bytes they take (media included); past either, 429. Default 10 000 and 256 MB. */
  scheduleQuota?: { maxPending?: number; maxBytes?: number | string }
  /** How long an OTP code is valid. Default 300 000 ms (5 minutes); at most 365 days (a store ttl), more is refused at start. */
  otpTtlMs?: number
  /** Wrong codes allowed before an OTP is void (a whole number). Default 5. */
  otpMaxTries?: number
  /** Key of the OTP code hashes (HMAC); set it (same value on every process) so a leaked store alone cannot reveal codes. */
  otpSecret?: string

  // Service routes beside the API (ServiceOptions)
  /** Serve the OpenAPI document at `/openapi.json` and Swagger UI at `/docs` (default true; not a boolean: refused at start). */
  docs?: boolean
  /** Serve Prometheus metrics at `/metrics` (default false). `{ registry }` fills a prom-client Registry of the host's instead of the gateway's own (until `close()`, which takes the gateway's metrics out of it; one gateway a Registry: a second is refused at start). Anything else is refused at start. */
  metrics?: boolean | { registry?: Registry }
  /** How long `/health` waits for the store and the transport (default 5000 ms). */
  healthTimeoutMs?: number

  // Rate limits (RateLimitOptions)
  /**
   * Request limits, answered 429 with Retry-After; `false` switches every one off (benchmarks,
   * trusted callers). The counters live in the gateway's store when every instance reaches it
   * (Redis, PostgreSQL), so that the limits hold across processes; otherwise in this process.
   */
  rateLimit?: RateLimitRules | false
}

/** The limits of `rateLimit` (each a rule, or false to switch it off). */
export interface RateLimitRules {
  /** Requests per account key (counted by a hash of the presented authkey). Default 3000 per 60 s (50 a second on average, in bursts). */
  perAccount?: RateRule | false
  /** Failed attempts of one presented authkey from one client IP; past it, that key from that IP is refused until the window ends (other keys from the IP are not). The key of a suspended or expired account is no failed attempt (it works once resumed or renewed). Default 30 per 900 s. */
  authFailures?: RateRule | false
  /**
   * Failed authkey attempts per client IP, whatever the keys (key spraying). Past it, a request from
   * that IP whose authkey turns out unknown is answered 429 instead of 401; a valid key still works. Default 300 per 900 s.
   */
  authFailuresPerIp?: RateRule | false
  /** Registrations (operation 1) per client IP. Default 20 per 3600 s. */
  registrations?: RateRule | false
  /** OTP verifications per device and recipient (on top of otpMaxTries per code). Default 10 per 900 s. */
  otpVerifications?: RateRule | false
}

/** The webhook delivery options (part of GatewayOptions). */
export type WebhookOptions = Pick<GatewayOptions, 'webhookRetryMs' | 'webhookMaxAgeMs' | 'webhookTimeoutMs'>
/** The agent options (part of GatewayOptions). */
export type AgentOptions = Pick<GatewayOptions, 'agentResponder' | 'agentTimeoutMs' | 'agentHistoryLimit'>
/** The messaging options (part of GatewayOptions): media, the per-device send queue, scheduling and OTP. */
export type MessagingOptions = Pick<GatewayOptions, keyof typeof DEFAULTS.messaging | 'otpSecret'>
/** The options of the service routes beside the API (part of GatewayOptions): documentation, metrics, health. */
export type ServiceOptions = Pick<GatewayOptions, 'docs' | 'metrics' | 'healthTimeoutMs'>
/** The rate limit options (part of GatewayOptions). */
export type RateLimitOptions = Pick<GatewayOptions, 'rateLimit'>

/** Every default of GatewayOptions (sizes as the options take them; the adapters' defaults: see defaults.ts). */
export const DEFAULTS = {
  httpStatus: 'mirror',
  plans: { '1': { name: 'Gratuito', days: 30 } } as Record<string, Plan>,
  shareLinkTtlMs: 86_400_000,
  allowPrivateUrls: false,
  timeZone: 'UTC',
  bodyLimit: '20mb',
  cacheTtlMs: 2000,
  /** Under the OS temporary folder. */
  spillDirName: 'zapgate-spill',
  storageTimeoutMs: 2000,
  bodyTimeoutMs: 30_000,
  shutdownGraceMs: 10_000,
  mediaBytesInFlight: '200mb',
  instances: { heartbeatMs: 3000, ttlMs: 15_000 },
  webhookRetryMs: [5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 86_400].map(s => s * 1000) as readonly number[],
  webhookMaxAgeMs: 72 * 3_600_000,
  webhookTimeoutMs: 15_000,
  agentTimeoutMs: 30_000,
  agentHistoryLimit: 20,
  messaging: {
    mediaMaxBytes: '16mb',
    mediaTimeoutMs: 30_000,
    sendTimeoutMs: 30_000,
    minIntervalMs: 0,
    intervalJitterMs: 0,
    sendQueueLimit: 1_000,
    scheduleRetryMs: [60_000, 300_000, 900_000],
    schedulePollMs: 15_000,
    scheduleMaxWaitMs: 86_400_000,
    scheduleQuota: { maxPending: 10_000, maxBytes: '256mb' },
    otpTtlMs: 300_000,
    otpMaxTries: 5,
  },
  docs: true,
  metrics: false,
  healthTimeoutMs: 5000,
  rateLimit: {
    perAccount: { points: 3000, duration: 60 },
    authFailures: { points: 30, duration: 900 },
    authFailuresPerIp: { points: 300, duration: 900 },
    registrations: { points: 20, duration: 3600 },
    otpVerifications: { points: 10, duration: 900 },
  },
  /** Fixed settings of webhook delivery (not options): attempts in flight per device, pending deliveries held in memory (about 100 bytes each), due ones waiting in memory per device, and how often the outbox is rescanned for records written behind their owner's back. */
  webhookDelivery: { concurrencyPerLane: 8, capacity: 10_000, lineLimit: 256, reconcileMs: 60_000 },
} as const
