import type Router from '@koa/router'
import type { Context, Middleware } from 'koa'
import type { Registry } from 'prom-client'
import { array, boolean, integer, number, object, optional, string } from 'superstruct'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { WebhookAdmin } from '../domain/webhooks/outbox.ts'
import { startMetrics, type GatewayMetrics, type MetricsDeps } from '../metrics.ts'
import type { Storage } from '../ports/storage.ts'
import type { Transport } from '../ports/transport.ts'
import type { Instances } from '../domain/instances.ts'
import type { PathEntry } from '../operations/operation.ts'
import { structSchema } from '../schema/struct-schema.ts'
import { openApiDocument, RETRY_AFTER } from './openapi.ts'
import { docsPage } from './docs-page.ts'
import { pageState } from './share-page.ts'
import { mountPrefix, type HttpStatusMode } from './render.ts'

/** The service routes beside the API, after defaults (the options and their defaults: src/options.ts). */
export interface ServiceSettings {
  docs: boolean
  metrics: false | { registry?: Registry }
  healthTimeoutMs: number
  /** The HTTP codes of the API's answers, as the OpenAPI document lists them. */
  httpStatus: HttpStatusMode
}

/** What the service routes read (the metrics' deps among them: logger, leases). */
interface ServiceRouteDeps extends MetricsDeps {
  storage: Storage
  transport: Transport
  instances: Instances
  baseUrl?: string
  /** The gateway's first middleware (observed, counted by the drain), before each route. */
  front: Middleware
}

const check = object({ ok: boolean(), ms: number() })

/** The body of `GET /health`: the checks, this process with the device sessions it holds, and the live instances with their loads. */
export const healthAnswer = object({
  status: integer(),
  message: string(),
  checks: object({ storage: check, transport: check }),
  instance: object({ id: string(), devices: array(string()), live: array(object({ id: string(), devices: integer(), url: optional(string()) })) }),
})

/** Add `/health`, `/openapi.json` and `/docs` (with `docs`), `/metrics` (with `metrics`: resolves with them) to the gateway's router. */
export async function addServiceRoutes(
  router: Router,
  services: ServiceRouteDeps,
  table: readonly PathEntry[],
  webhooks: WebhookAdmin,
  settings: ServiceSettings,
): Promise<GatewayMetrics | undefined> {
  const metrics = settings.metrics ? await startMetrics(services, webhooks, settings.metrics.registry) : undefined
  healthRoute(router, services, settings.healthTimeoutMs)
  if (settings.docs) {
    let document: Record<string, unknown> | undefined
    router.get('/openapi.json', services.front, (ctx: Context) => {
      document ??= openApiDocument(table, packageVersion(), serviceRouteDocs(metrics !== undefined), settings.httpStatus)
      ctx.set({ 'Cache-Control': 'no-cache', 'Access-Control-Allow-Origin': '*' })
      ctx.body = { ...document, servers: [{ url: services.baseUrl ?? `${ctx.protocol}://${ctx.host}${mountPrefix(ctx, '/openapi.json')}` }] }
    })
    docsPage(router, services.front, services.logger)
  }
  if (metrics) {
    router.get('/metrics', services.front, async (ctx: Context) => {
      const { contentType, text } = await metrics.scrape()
      ctx.set('Cache-Control', 'no-store')
      ctx.type = contentType
      ctx.body = text
    })
  }
  return metrics
}

// --- Internal helpers ---

/** `GET /health`: 200 if store and transport answer within `timeoutMs`, else 503 whatever `httpStatus` (load balancers read it); failures logged only. */
function healthRoute(router: Router, { storage, transport, logger, instances, leases, front }: ServiceRouteDeps, timeoutMs: number): void {
  router.get('/health', front, async (ctx: Context) => {
    const [storageCheck, transportCheck] = await Promise.all([
      probe('storage', () => storage.ping?.() ?? Promise.resolve()),
      probe('transport', () => (transport.ping ? transport.ping() : transport.status(PROBE_DEVICE).then(() => undefined))),
    ])
    const healthy = storageCheck.ok && transportCheck.ok
    ctx.set('Cache-Control', 'no-store')
    ctx.status = healthy ? 200 : 503
    ctx.body = {
      status: ctx.status,
      message: healthy ? 'Gateway disponível.' : 'Gateway indisponível.',
      checks: { storage: storageCheck, transport: transportCheck },
      instance: {
        id: instances.id,
        devices: leases.devices,
        live: instances.view.liveRecords.map(record => ({
          id: record.id,
          devices: record.id === instances.id ? leases.count : (record.devices ?? 0),
          ...(record.url ? { url: record.url } : {}),
        })),
      },
    }
  })

  async function probe(name: string, run: () => Promise<unknown>): Promise<{ ok: boolean; ms: number }> {
    const started = performance.now()
    const ms = () => Math.round((performance.now() - started) * 10) / 10
    let timer: NodeJS.Timeout | undefined
    try {
      await Promise.race([run(), new Promise((_, reject) => (timer = setTimeout(reject, timeoutMs, new Error(`no answer within ${timeoutMs} ms`))))])
      return { ok: true, ms: ms() }
    } catch (err) {
      logger.warn({ err, check: name }, 'health check failed')
      return { ok: false, ms: ms() }
    } finally {
      clearTimeout(timer)
    }
  }
}

/** A GET route's 503: the drain's, or one of the store or (media, in a cluster) of the instance holding the device. */
const UNAVAILABLE = 'Shutting down, the store unavailable, or (a media link, cluster mode) the instance holding its device unreachable.'

/** A device id no device has: reading its status exercises the transport without touching a session. */
const PROBE_DEVICE = '__zapgate_health_probe__'

/** The OpenAPI path items of the routes beside the operation table: QR share page, media links, health, metrics, docs. */
function serviceRouteDocs(metrics: boolean): Record<string, unknown> {
  const token = { name: 'token', in: 'path', required: true, schema: { type: 'string' }, description: 'The token of a `link` answered by operations 3 and 4.' }
  const body = (type: string, schema: unknown) => (description: string) => ({ description, content: { [type]: { schema } } })
  const [html, text] = [body('text/html', { type: 'string' }), body('text/plain', { type: 'string' })]
  const error = { $ref: '#/components/schemas/ErrorAnswer' }
  const refused = body('application/json', error)
  const retry = (response: object) => ({ ...response, headers: RETRY_AFTER }) // as drain.ts and render.ts answer a 503
  const revoked = 'Unknown, expired (`shareLinkTtlMs`) or revoked (`GerenciarLinks: excluir`) link, or one whose device was logged out since it connected.'
  const health = body('application/json', structSchema(healthAnswer))
  const state = body('application/json', structSchema(pageState))
  const get = (operationId: string, summary: string, responses: Record<string, unknown>, parameters?: unknown[]) => ({
    get: { operationId, tags: ['service'], summary, ...(parameters ? { parameters } : {}), responses: { 503: retry(refused(UNAVAILABLE)), ...responses } },
  })
  return {
    '/qr/{token}': get(
      'getSharePage',
      "QR share page: shows the device's live QR until it connects, then says so (never the phone number)",
      { 200: html('An HTML page (polls its state every 2 s).'), 404: html(revoked) },
      [token],
    ),
    '/qr/{token}/state': get(
      'getSharePageState',
      'The state the share page shows',
      { 200: state('Connected since the link was made, or the current QR as a PNG data URI.'), 404: refused(revoked) },
      [token],
    ),
    '/media/{token}': get(
      'getMedia',
      'Received media too large for its webhook event: the `url` of its message (HTTP codes whatever `httpStatus` says)',
      {
        200: body('*/*', { type: 'string', format: 'binary' })('The bytes, typed as the sender said; an attachment unless image, audio, video, PDF or text.'),
        404: refused('Unknown or expired (7 days) link, or a message the device no longer has.'),
        500: refused('The download failed for a reason the transport did not name.'),
        502: refused('The messaging network refused the download.'),
        504: refused('The messaging network did not answer in time.'),
      },
      [{ ...token, description: 'The token of the link (signed by the gateway).' }],
    ),
    '/health': get('getHealth', 'Whether the store and the messaging transport answer', {
      200: health('Both answer.'),
      503: retry(body('application/json', { anyOf: [structSchema(healthAnswer), error] })('A check failed; `{status, message}` while shutting down.')),
    }),
    ...(metrics ? { '/metrics': get('getMetrics', 'Prometheus metrics (text exposition format)', { 200: text('Every zapgate_* metric.') }) } : {}),
    '/openapi.json': get('getOpenApi', 'This document', {
      200: body('application/json', { type: 'object' })('OpenAPI 3.1, generated from the operation table.'),
    }),
    '/docs': get('getDocs', 'This document in Swagger UI (served from the package, no CDN)', { 200: html('An HTML page.') }),
  }
}

let version: string | undefined

/** The version of this package (its package.json, found by walking up from this file). */
function packageVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); !version; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string }
      if (pkg.name === 'zapgate' && pkg.version) version = pkg.version
    } catch {}
    if (!version && dirname(dir) === dir) version = '0.0.0'
  }
  return version
}
