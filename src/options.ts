import { createHmac } from 'node:crypto'
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
   * scheduled messages pass to the others (within about `ttlMs + heartbeatMs`).
   */
  instances?: { heartbeatMs?: number; ttlMs?: number }
  /**
   * Cluster mode: several instances on one Redis or PostgreSQL store, any of them answering any
   * request (forwarded to the instance holding the device). `secret` authenticates the instances to
   * each other; `advertiseUrl` is where the others reach this one (its mount point); `maxDevices`
   * caps the device sessions this instance holds.
   */
  cluster?: { secret: string; advertiseUrl: string; maxDevices?: number }
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
  bodyTimeoutMs: number
  shutdownGraceMs: number
  mediaBytesInFlight: number
  instances: InstanceSettings
  cluster?: { secret: string; advertiseUrl: string; maxDevices?: number }
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
    bodyTimeoutMs: positive(options.bodyTimeoutMs ?? 30_000, 'bodyTimeoutMs'),
    shutdownGraceMs: atLeastZero(options.shutdownGraceMs ?? 10_000, 'shutdownGraceMs'),
    mediaBytesInFlight: positiveSize(options.mediaBytesInFlight ?? '200mb', 'mediaBytesInFlight'),
    instances: resolveInstances(options.instances ?? {}),
    cluster: resolveCluster(options.cluster),
    webhookDelivery: resolveWebhookOptions(options),
    agents: resolveAgentOptions(options),
    // Instances of a cluster verify each other's OTP codes: without otpSecret they derive one from the cluster secret.
    messaging: resolveMessagingOptions(options.otpSecret || !options.cluster?.secret ? options : { ...options, otpSecret: createHmac('sha256', options.cluster.secret).update('zapgate otp secret').digest('base64') }, parseSize),
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

/** Cluster settings checked: a secret long enough to sign with, an absolute advertised URL. */
function resolveCluster(given: GatewayOptions['cluster']): ResolvedOptions['cluster'] {
  if (given === undefined) return undefined
  if (typeof given.secret !== 'string' || given.secret.length < 16) throw new Error('createGateway: cluster.secret must be a string of at least 16 characters (GATEWAY_CLUSTER_SECRET)')
  let url: URL
  try {
    url = new URL(given.advertiseUrl)
  } catch {
    throw new Error(`createGateway: cluster.advertiseUrl must be an absolute http(s) URL (GATEWAY_ADVERTISE_URL), not ${JSON.stringify(given.advertiseUrl)}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('createGateway: cluster.advertiseUrl must be an http(s) URL (GATEWAY_ADVERTISE_URL)')
  if (given.maxDevices !== undefined && !(Number.isInteger(given.maxDevices) && given.maxDevices > 0)) throw new Error('createGateway: cluster.maxDevices must be a whole number > 0')
  return { secret: given.secret, advertiseUrl: url.href.replace(/\/+$/, ''), ...(given.maxDevices ? { maxDevices: given.maxDevices } : {}) }
}

/** `value` when it is a positive finite number, else a clear start-up Error naming the option. */
function positive(value: number, name: string): number {
  if (!(Number.isFinite(value) && value > 0)) throw new Error(`createGateway: ${name} must be a positive number of ms`)
  return value
}

/** `value` when it is a finite number >= 0, else a clear start-up Error naming the option. */
function atLeastZero(value: number, name: string): number {
  if (!(Number.isFinite(value) && value >= 0)) throw new Error(`createGateway: ${name} must be a number of ms >= 0`)
  return value
}

/** A size option read as bytes, which must be more than 0. */
function positiveSize(size: number | string, name: string): number {
  const bytes = parseSize(size)
  if (!(Number.isFinite(bytes) && bytes > 0)) throw new Error(`createGateway: ${name} must be a size > 0`)
  return bytes
}

/** Bytes in a size like `512kb`, `20mb` or a number of bytes. */
function parseSize(size: number | string): number {
  if (typeof size === 'number') return size
  const match = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(size)
  if (!match) throw new Error(`createGateway: cannot read size ${JSON.stringify(size)}`)
  const unit = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(match[2] ?? 'b').toLowerCase() as 'b']
  return Math.floor(Number(match[1]) * unit)
}
