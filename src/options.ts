import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Logger } from './logger.ts'
import type { MediaFetcher } from './ports/media.ts'
import type { Storage } from './ports/storage.ts'
import type { Transport } from './ports/transport.ts'
import type { WebhookSender } from './ports/webhooks.ts'
import type { HttpStatusMode } from './http/render.ts'
import { checkServiceOptions, type ServiceOptions } from './http/service-routes.ts'
import { defaultPlans, type Plan } from './domain/accounts.ts'
import { isValidTimeZone } from './domain/clock.ts'
import type { InstanceSettings } from './domain/instances.ts'
import { resolveWebhookOptions, type WebhookOptions, type WebhookSettings } from './domain/webhooks/config.ts'
import { resolveAgentOptions, type AgentSettings } from './domain/agent-runner.ts'
import type { AgentOptions } from './ports/agents.ts'
import { resolveMessagingOptions, type MessagingOptions, type ResolvedMessagingOptions } from './domain/messaging/options.ts'
import { resolveRateLimitOptions, type RateLimitOptions, type RateLimitSettings } from './security/rate-limits.ts'

/** Options of createGateway. Every one has a default. Messaging options: see MessagingOptions. */
export interface GatewayOptions extends WebhookOptions, AgentOptions, MessagingOptions, ServiceOptions, RateLimitOptions {
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
  /** Absolute URL the gateway is reachable at, for links (default: the request's origin and mount path). */
  baseUrl?: string
  /** Let webhook and media URLs reach loopback and private addresses (default false). */
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
   * Folder where incoming events and webhook events wait, past a thousand in memory, while the store
   * is down (created 0700; default `<os tmpdir>/zapgate-spill`). A process started later on this
   * host replays what a gone one left there.
   */
  spillDir?: string
  /** How long one store call may take before the request answers 503 (default 2000 ms). */
  storageTimeoutMs?: number
  /**
   * Processes sharing one store register in it and renew their record every `heartbeatMs` (default
   * 3000); one silent for `ttlMs` (default 15000) is gone, and its claims on webhook events and
   * scheduled messages pass to the others (within about `ttlMs + heartbeatMs`).
   */
  instances?: { heartbeatMs?: number; ttlMs?: number }
}

/** Options after defaults, as the domain reads them. */
export interface ResolvedOptions {
  httpStatus: HttpStatusMode
  plans: Record<string, Plan>
  baseUrl?: string
  allowPrivateUrls: boolean
  timeZone: string
  bodyLimitBytes: number
  cacheTtlMs: number
  spillDir: string
  storageTimeoutMs: number
  instances: InstanceSettings
  webhookDelivery: WebhookSettings
  agents: AgentSettings
  messaging: ResolvedMessagingOptions
  rateLimits: RateLimitSettings
}

/** Fill in defaults and reject contradictory options early (a clear Error at start-up). */
export function resolveOptions(options: GatewayOptions): ResolvedOptions {
  const timeZone = options.timeZone ?? 'UTC'
  if (!isValidTimeZone(timeZone)) throw new Error(`createGateway: unknown timeZone ${JSON.stringify(timeZone)}`)
  const httpStatus = options.httpStatus ?? 'mirror'
  if (httpStatus !== 'mirror' && httpStatus !== 'always200') throw new Error(`createGateway: httpStatus must be 'mirror' or 'always200'`)
  checkServiceOptions(options)
  const plans = options.plans ?? defaultPlans
  const cacheTtlMs = options.cacheTtlMs ?? 2000
  if (!(Number.isFinite(cacheTtlMs) && cacheTtlMs >= 0)) throw new Error('createGateway: cacheTtlMs must be a number >= 0')
  for (const [id, plan] of Object.entries(plans)) {
    if (!plan || typeof plan.name !== 'string' || !(plan.days > 0)) throw new Error(`createGateway: plan ${id} needs a name and days > 0`)
  }
  return {
    httpStatus,
    plans,
    baseUrl: options.baseUrl?.replace(/\/+$/, ''),
    allowPrivateUrls: options.allowPrivateUrls ?? false,
    timeZone,
    bodyLimitBytes: parseSize(options.bodyLimit ?? '20mb'),
    cacheTtlMs,
    spillDir: options.spillDir ?? join(tmpdir(), 'zapgate-spill'),
    storageTimeoutMs: positive(options.storageTimeoutMs ?? 2000, 'storageTimeoutMs'),
    instances: resolveInstances(options.instances ?? {}),
    webhookDelivery: resolveWebhookOptions(options),
    agents: resolveAgentOptions(options),
    messaging: resolveMessagingOptions(options, parseSize),
    rateLimits: resolveRateLimitOptions(options),
  }
}

/** Instance registry timing: the heartbeat must come well inside the time-to-live. */
function resolveInstances(given: { heartbeatMs?: number; ttlMs?: number }): InstanceSettings {
  const heartbeatMs = positive(given.heartbeatMs ?? 3000, 'instances.heartbeatMs')
  const ttlMs = positive(given.ttlMs ?? 15_000, 'instances.ttlMs')
  if (ttlMs < heartbeatMs * 2) throw new Error('createGateway: instances.ttlMs must be at least twice instances.heartbeatMs')
  return { heartbeatMs, ttlMs }
}

/** `value` when it is a positive finite number, else a clear start-up Error naming the option. */
function positive(value: number, name: string): number {
  if (!(Number.isFinite(value) && value > 0)) throw new Error(`createGateway: ${name} must be a positive number of ms`)
  return value
}

/** Bytes in a size like `512kb`, `20mb` or a number of bytes. */
export function parseSize(size: number | string): number {
  if (typeof size === 'number') return size
  const match = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(size)
  if (!match) throw new Error(`createGateway: cannot read size ${JSON.stringify(size)}`)
  const unit = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(match[2] ?? 'b').toLowerCase() as 'b']
  return Math.floor(Number(match[1]) * unit)
}
