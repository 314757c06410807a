import type Router from '@koa/router'
import type { Context } from 'koa'
import type { Registry } from 'prom-client'
import type { WebhookAdmin } from '../domain/webhooks/outbox.ts'
import { startMetrics, type GatewayMetrics, type MetricsDeps } from '../metrics.ts'
import type { Logger } from '../logger.ts'
import type { Storage } from '../ports/storage.ts'
import type { Transport } from '../ports/transport.ts'
import type { DeviceLeases } from '../domain/cluster/device-leases.ts'
import type { Instances } from '../domain/instances.ts'
import { docsRoutes } from './docs-page.ts'
import { healthRoute } from './health.ts'
import type { PathEntry } from '../operations/operation.ts'

/** The service routes beside the API, after defaults (the options and their defaults: src/options.ts). */
export interface ServiceSettings {
  /** Serve the OpenAPI document and Swagger UI. */
  docs: boolean
  /** Serve Prometheus metrics at `/metrics` (in the host's Registry when it gives one). */
  metrics: false | { registry?: Registry }
  /** How long `/health` waits for the store and the transport. */
  healthTimeoutMs: number
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

/**
 * Add the service routes to the gateway's router: `/health` (always), `/openapi.json` and `/docs`
 * (unless `docs: false`), `/metrics` (with `metrics`). Resolves with the metrics when they are on.
 */
export async function addServiceRoutes(
  router: Router,
  services: ServiceRouteDeps,
  table: readonly PathEntry[],
  webhooks: WebhookAdmin,
  settings: ServiceSettings,
): Promise<GatewayMetrics | undefined> {
  const metrics = settings.metrics ? await startMetrics(services, webhooks, settings.metrics.registry) : undefined
  healthRoute(router, services, settings.healthTimeoutMs)
  if (settings.docs) docsRoutes(router, services.baseUrl, table, { docs: true, metrics: metrics !== undefined })
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
