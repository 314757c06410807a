import { createHmac, randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Registry } from 'prom-client'
import { silentLogger, type Logger } from './logger.ts'
import type { HttpStatusMode } from './http/render.ts'
import type { ServiceSettings } from './http/service-routes.ts'
import type { Plan } from './domain/accounts.ts'
import { isValidTimeZone } from './domain/clock.ts'
import { BAD_PORTS } from './client-api.ts'
import type { AgentSettings } from './domain/agents.ts'
import type { InstanceSettings } from './domain/instances.ts'
import type { MessagingSettings } from './domain/messaging/index.ts'
import type { WebhookSettings } from './domain/webhooks/config.ts'
import type { RateLimitSettings } from './security/rate-limits.ts'
import { DEFAULTS, type AgentOptions, type GatewayOptions, type RateLimitRules, type WebhookOptions } from './options.ts'

/** Options after defaults, as the rest of the gateway reads them. */
export interface ResolvedOptions {
  /** The adapters given; defaults.ts fills in the others (imported only when needed). */
  adapters: Pick<GatewayOptions, 'storage' | 'transport' | 'webhooks' | 'media'>
  logger: Logger
  httpStatus: HttpStatusMode
  plans: Record<string, Plan>
  baseUrl?: string
  shareLinkTtlMs: number
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
  messaging: MessagingSettings
  service: ServiceSettings
  rateLimits: RateLimitSettings
}

/** Fill in defaults and reject contradictory options early (a clear Error at start-up). */
export function resolveOptions(options: GatewayOptions): ResolvedOptions {
  const timeZone = resolveTimeZone(options.timeZone ?? undefined)
  const httpStatus = options.httpStatus ?? DEFAULTS.httpStatus
  if (httpStatus !== 'mirror' && httpStatus !== 'always200') throw new Error(`createGateway: httpStatus must be 'mirror' or 'always200'`)
  const cacheTtlMs = options.cacheTtlMs ?? DEFAULTS.cacheTtlMs
  if (!(Number.isFinite(cacheTtlMs) && cacheTtlMs >= 0)) throw new Error('createGateway: cacheTtlMs must be a number >= 0')
  return {
    adapters: { storage: options.storage, transport: options.transport, webhooks: options.webhooks, media: options.media },
    logger: options.logger ?? silentLogger,
    httpStatus,
    plans: resolvePlans(options.plans ?? undefined), // null (a JSON config's "not set") as not given, as `??` takes every other option
    baseUrl: resolveBaseUrl(options.baseUrl),
    shareLinkTtlMs: storeTtl(options.shareLinkTtlMs ?? DEFAULTS.shareLinkTtlMs, 'shareLinkTtlMs'),
    allowPrivateUrls: flag(options.allowPrivateUrls ?? DEFAULTS.allowPrivateUrls, 'allowPrivateUrls'),
    timeZone,
    bodyLimitBytes: positiveSize(options.bodyLimit ?? DEFAULTS.bodyLimit, 'bodyLimit'),
    cacheTtlMs,
    spillDir: options.spillDir ?? join(tmpdir(), DEFAULTS.spillDirName),
    storageTimeoutMs: positive(options.storageTimeoutMs ?? DEFAULTS.storageTimeoutMs, 'storageTimeoutMs'),
    bodyTimeoutMs: positive(options.bodyTimeoutMs ?? DEFAULTS.bodyTimeoutMs, 'bodyTimeoutMs'),
    shutdownGraceMs: timer(atLeastZero(options.shutdownGraceMs ?? DEFAULTS.shutdownGraceMs, 'shutdownGraceMs')),
    mediaBytesInFlight: positiveSize(options.mediaBytesInFlight ?? DEFAULTS.mediaBytesInFlight, 'mediaBytesInFlight'),
    instances: resolveInstances(options.instances ?? {}),
    cluster: resolveCluster(options.cluster ?? undefined),
    webhookDelivery: resolveWebhooks(options),
    agents: resolveAgents(options),
    messaging: resolveMessaging(options),
    service: {
      docs: flag(options.docs ?? DEFAULTS.docs, 'docs'),
      metrics: resolveMetrics(options.metrics ?? DEFAULTS.metrics),
      healthTimeoutMs: timer(positive(options.healthTimeoutMs ?? DEFAULTS.healthTimeoutMs, 'healthTimeoutMs')),
      httpStatus,
    },
    rateLimits: resolveRateLimits(options.rateLimit ?? undefined),
  }
}

/** The plans given (each checked: a name and whole days, 1 to 36500: more make no date), or the default ones. */
export function resolvePlans(plans: Record<string, Plan> = DEFAULTS.plans): Record<string, Plan> {
  for (const [id, plan] of Object.entries(plans)) {
    if (!plan || typeof plan.name !== 'string' || !(Number.isInteger(plan.days) && plan.days > 0 && plan.days <= 36_500))
      throw new Error(`createGateway: plan ${id} needs a name and days, a whole number from 1 to 36500`)
  }
  return plans
}

/** The time zone given (a known IANA zone), or the default. */
export function resolveTimeZone(timeZone: string = DEFAULTS.timeZone): string {
  if (!isValidTimeZone(timeZone)) throw new Error(`createGateway: unknown timeZone ${JSON.stringify(timeZone)}`)
  return timeZone
}

// --- Internal helpers ---

/** The base URL of links (none: each request's origin): an absolute http(s) URL without query or fragment, its trailing slashes dropped. */
function resolveBaseUrl(given: string | undefined): string | undefined {
  if (given == null) return undefined
  const url = typeof given === 'string' && URL.canParse(given) ? new URL(given) : undefined
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || /[?#]/.test(given))
    throw new Error(`createGateway: baseUrl must be an absolute http:// or https:// URL without query, not ${JSON.stringify(given)}`)
  return given.trim().replace(/\/+$/, '')
}

/** Instance registry timing: the heartbeat must come well inside the time-to-live. */
function resolveInstances(given: { heartbeatMs?: number; ttlMs?: number }): InstanceSettings {
  const heartbeatMs = positive(given.heartbeatMs ?? DEFAULTS.instances.heartbeatMs, 'instances.heartbeatMs')
  const ttlMs = positive(given.ttlMs ?? DEFAULTS.instances.ttlMs, 'instances.ttlMs')
  if (ttlMs < heartbeatMs * 2) throw new Error('createGateway: instances.ttlMs must be at least twice instances.heartbeatMs')
  // The heartbeat is a setInterval: past timer()'s bound it would beat every millisecond.
  return { heartbeatMs: timer(heartbeatMs), ttlMs }
}

/** Cluster settings checked: a secret long enough to sign with, an absolute advertised URL. */
function resolveCluster(given: GatewayOptions['cluster']): ResolvedOptions['cluster'] {
  if (given === undefined) return undefined
  if (typeof given.secret !== 'string' || given.secret.length < 16)
    throw new Error('createGateway: cluster.secret must be a string of at least 16 characters (GATEWAY_CLUSTER_SECRET)')
  let url: URL
  try {
    url = new URL(given.advertiseUrl)
  } catch {
    throw new Error(`createGateway: cluster.advertiseUrl must be an absolute http(s) URL (GATEWAY_ADVERTISE_URL), not ${JSON.stringify(given.advertiseUrl)}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error('createGateway: cluster.advertiseUrl must be an http(s) URL (GATEWAY_ADVERTISE_URL)')
  // The other instances relay /media/<token> to it with fetch, and clients follow its hint with fetch: on such a port both always fail.
  if (BAD_PORTS.has(url.port))
    throw new Error(
      `createGateway: cluster.advertiseUrl is on port ${url.port}, which fetch refuses to call (a "bad port" of the fetch standard: media relays to this instance and clients following its hint would fail); advertise another port (GATEWAY_ADVERTISE_URL)`,
    )
  if (given.maxDevices !== undefined && !(Number.isInteger(given.maxDevices) && given.maxDevices > 0))
    throw new Error('createGateway: cluster.maxDevices must be a whole number > 0')
  return { secret: given.secret, advertiseUrl: url.href.replace(/\/+$/, ''), ...(given.maxDevices ? { maxDevices: given.maxDevices } : {}) }
}

function resolveWebhooks(options: WebhookOptions): WebhookSettings {
  const delays = options.webhookRetryMs ?? DEFAULTS.webhookRetryMs
  if (!Array.isArray(delays) || delays.length === 0 || delays.length > 100) throw new Error('createGateway: webhookRetryMs must list 1 to 100 delays in ms')
  for (const delay of delays) {
    if (typeof delay !== 'number' || !Number.isFinite(delay) || delay < 0) throw new Error(`createGateway: webhookRetryMs has a bad delay ${delay}`)
  }
  return {
    retryMs: [...delays],
    maxAgeMs: positive(options.webhookMaxAgeMs ?? DEFAULTS.webhookMaxAgeMs, 'webhookMaxAgeMs'),
    timeoutMs: timer(positive(options.webhookTimeoutMs ?? DEFAULTS.webhookTimeoutMs, 'webhookTimeoutMs')),
    ...DEFAULTS.webhookDelivery,
  }
}

function resolveAgents(options: AgentOptions): AgentSettings {
  const given = options.agentResponder
  if (given !== undefined && typeof given !== 'function' && typeof given?.respond !== 'function') {
    throw new Error('createGateway: agentResponder must be a function or an object with respond()')
  }
  const historyLimit = options.agentHistoryLimit ?? DEFAULTS.agentHistoryLimit
  if (!Number.isInteger(historyLimit) || historyLimit < 0) throw new Error('createGateway: agentHistoryLimit must be a whole number >= 0')
  return {
    responder: given === undefined ? undefined : typeof given === 'function' ? given : given.respond.bind(given),
    timeoutMs: timer(positive(options.agentTimeoutMs ?? DEFAULTS.agentTimeoutMs, 'agentTimeoutMs')),
    historyLimit,
  }
}

function resolveMessaging(options: GatewayOptions): MessagingSettings {
  const given = { ...DEFAULTS.messaging, ...defined(options, Object.keys(DEFAULTS.messaging) as (keyof typeof DEFAULTS.messaging)[]) }
  const resolved: MessagingSettings = {
    ...given,
    mediaMaxBytes: parseSize(given.mediaMaxBytes),
    scheduleQuota: {
      maxPending: options.scheduleQuota?.maxPending ?? DEFAULTS.messaging.scheduleQuota.maxPending,
      maxBytes: positiveSize(options.scheduleQuota?.maxBytes ?? DEFAULTS.messaging.scheduleQuota.maxBytes, 'scheduleQuota.maxBytes'),
    },
    scheduleRetryMs: given.scheduleRetryMs as number[],
    // Without a configured secret each process draws its own: a leaked store alone never reveals codes
    // (a hash of a 6-digit code under a known key falls to brute force), at the price of pending codes
    // not surviving a restart. Set otpSecret (the same on every process) to keep them. Instances of a
    // cluster verify each other's codes: without otpSecret they derive one from the cluster secret.
    otpSecret:
      options.otpSecret ||
      (options.cluster?.secret
        ? createHmac('sha256', options.cluster.secret).update('zapgate otp secret').digest('base64')
        : (options.otpSecret ?? randomBytes(32).toString('base64'))),
  }
  for (const name of ['mediaMaxBytes', 'mediaTimeoutMs', 'sendTimeoutMs', 'schedulePollMs', 'scheduleMaxWaitMs'] as const) {
    if (!(Number.isFinite(resolved[name]) && resolved[name] > 0)) throw new Error(`createGateway: ${name} must be a positive number`)
  }
  storeTtl(resolved.otpTtlMs, 'otpTtlMs')
  for (const name of ['sendQueueLimit', 'otpMaxTries'] as const) {
    if (!(Number.isInteger(resolved[name]) && resolved[name] > 0)) throw new Error(`createGateway: ${name} must be a whole number > 0`)
  }
  for (const name of ['minIntervalMs', 'intervalJitterMs'] as const) {
    if (!(Number.isFinite(resolved[name]) && resolved[name] >= 0)) throw new Error(`createGateway: ${name} must be a number >= 0`)
  }
  if (!Array.isArray(resolved.scheduleRetryMs) || !resolved.scheduleRetryMs.every(ms => Number.isFinite(ms) && ms >= 0)) {
    throw new Error('createGateway: scheduleRetryMs must be a list of delays >= 0')
  }
  if (typeof resolved.otpSecret !== 'string' || resolved.otpSecret === '') throw new Error('createGateway: otpSecret must be a non-empty string')
  if (!(Number.isInteger(resolved.scheduleQuota.maxPending) && resolved.scheduleQuota.maxPending > 0))
    throw new Error('createGateway: scheduleQuota.maxPending must be a whole number > 0')
  // Node timers wait for these (the send queue's close for their sum): at most a third of timer()'s bound each.
  for (const name of ['mediaTimeoutMs', 'sendTimeoutMs', 'minIntervalMs', 'intervalJitterMs'] as const) resolved[name] = Math.min(resolved[name], 715_827_882)
  // The scheduler's rescan is a setInterval: past timer()'s bound it would run every millisecond.
  resolved.schedulePollMs = timer(resolved.schedulePollMs)
  return resolved
}

function resolveRateLimits(given: RateLimitRules | false = {}): RateLimitSettings {
  const names = Object.keys(DEFAULTS.rateLimit) as (keyof RateLimitRules)[]
  if (given === false) return Object.fromEntries(names.map(name => [name, false])) as unknown as RateLimitSettings
  const settings: RateLimitSettings = { ...DEFAULTS.rateLimit }
  for (const name of names) {
    const rule = given[name]
    if (rule === undefined) continue
    if (rule !== false && !(Number.isInteger(rule?.points) && rule.points > 0 && Number.isInteger(rule.duration) && rule.duration > 0)) {
      throw new Error(`createGateway: rateLimit.${name} must be false or { points, duration } with positive whole numbers (duration in seconds)`)
    }
    settings[name] = rule
  }
  return settings
}

/** The options named that are given (one left undefined or null takes its default). */
function defined<T extends object, K extends keyof T>(object: T, names: K[]): Partial<Pick<T, K>> {
  return Object.fromEntries(names.filter(name => object[name] != null).map(name => [name, object[name]])) as Partial<Pick<T, K>>
}

/** `value` when it is a boolean, else a clear start-up Error naming the option (a string such as 'false' is true to JavaScript). */
function flag(value: boolean, name: string): boolean {
  if (typeof value !== 'boolean') throw new Error(`createGateway: ${name} must be true or false, not ${JSON.stringify(value)}`)
  return value
}

/** The metrics option: true, false or `{ registry? }`. */
function resolveMetrics(given: boolean | { registry?: Registry }): ServiceSettings['metrics'] {
  if (typeof given === 'boolean') return given ? { registry: undefined } : false
  if (given === null || typeof given !== 'object') throw new Error(`createGateway: metrics must be true, false or { registry }, not ${JSON.stringify(given)}`)
  return { registry: given.registry }
}

/** `value` when it is a positive finite number, else a clear start-up Error naming the option. */
function positive(value: number, name: string): number {
  if (!(Number.isFinite(value) && value > 0)) throw new Error(`createGateway: ${name} must be a positive number of ms`)
  return value
}

/** The longest store ttl option (365 days, as GATEWAY_SHARE_LINK_TTL_MS): Redis refuses a PX past about 9.2e18 ms, so a longer one failed every write. */
const MAX_STORE_TTL_MS = 365 * 86_400_000

/** `value` when it is a positive number of ms of at most 365 days (a store ttl), else a clear start-up Error naming the option. */
function storeTtl(value: number, name: string): number {
  if (!(Number.isFinite(value) && value > 0 && value <= MAX_STORE_TTL_MS))
    throw new Error(`createGateway: ${name} must be a positive number of ms, at most 365 days`)
  return value
}

/** A time a Node timer waits for, at most 2^31 - 1 ms (24.8 days): setTimeout fires at once past it. */
function timer(ms: number): number {
  return Math.min(ms, 2 ** 31 - 1)
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
