import type Router from '@koa/router'
import type { Context } from 'koa'
import type { Registry } from 'prom-client'
import type { WebhookAdmin } from '../domain/webhooks/index.ts'
import { startMetrics, type GatewayMetrics, type MetricsDeps } from '../metrics.ts'
import type { Logger } from '../logger.ts'
import type { Storage } from '../ports/storage.ts'
import type { Transport } from '../ports/transport.ts'
import type { DeviceLeases } from '../domain/cluster/device-leases.ts'
import type { Instances } from '../domain/instances.ts'
import { docsRoutes } from './docs-page.ts'
import { healthRoute } from './health.ts'
import type { PathEntry } from '../operations/operation.ts'

/** Options of the service routes beside the API: documentation, metrics, health. */
export interface ServiceOptions {
  /** Serve the OpenAPI document at `/openapi.json` and Swagger UI at `/docs` (default true). */
  docs?: boolean
  /**
   * Serve Prometheus metrics at `/metrics` (default false). `{ registry }` fills a prom-client
   * Registry of the host's instead of the gateway's own.
   */
  metrics?: boolean | { registry?: Registry }
  /** How long `/health` waits for the store and the transport (default 5000 ms). */
  healthTimeoutMs?: number
}

/** What the service routes read: the store and the transport (health), what metrics count, the base URL (docs). */
interface ServiceRouteDeps extends MetricsDeps {
  storage: Storage
  transport: Transport
  logger: Logger
  instances: Instances
  leases: DeviceLeases
  baseUrl?: string
}

/** Reject bad service options with a clear Error at start-up (called by resolveOptions). */
export function checkServiceOptions(options: ServiceOptions): void {
  const { healthTimeoutMs } = options
  if (healthTimeoutMs !== undefined && !(healthTimeoutMs > 0 && Number.isFinite(healthTimeoutMs))) throw new Error('createGateway: healthTimeoutMs must be a positive number of ms')
}

/**
 * Add the service routes to the gateway's router: `/health` (always), `/openapi.json` and `/docs`
 * (unless `docs: false`), `/metrics` (with `metrics`). Resolves with the metrics when they are on.
 */
export async function addServiceRoutes(router: Router, services: ServiceRouteDeps, table: readonly PathEntry[], webhooks: WebhookAdmin, options: ServiceOptions): Promise<GatewayMetrics | undefined> {
  const docs = options.docs ?? true
  const metrics = options.metrics ? await startMetrics(services, webhooks, typeof options.metrics === 'object' ? options.metrics.registry : undefined) : undefined
  healthRoute(router, services, options.healthTimeoutMs)
  if (docs) docsRoutes(router, services.baseUrl, table, { docs, metrics: metrics !== undefined })
  if (metrics) {
    router.get('/metrics', async (ctx: Context) => {
      const { contentType, text } = await metrics.scrape()
      ctx.set('Cache-Control', 'no-store')
      ctx.type = contentType
      ctx.body = text
    })
  }
  return metrics
}
