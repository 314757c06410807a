import type Router from '@koa/router'
import type { Registry } from 'prom-client'
import type { Context, Middleware } from 'koa'
import compose from 'koa-compose'
import { GatewayEvents } from './events.ts'
import { buildRouter, frontSteps } from './http/router.ts'
import { RequestDrain } from './http/drain.ts'
import { addServiceRoutes } from './http/service-routes.ts'
import { operationTable } from './operations/table.ts'
import { rememberInternals } from './internals.ts'
import type { GatewayOptions } from './options.ts'
import type { WebhookAdmin } from './domain/webhooks/outbox.ts'
import { resolveOptions } from './resolve-options.ts'
import { wireGateway } from './wiring.ts'
import { accountAdminOf, type AccountAdmin } from './account-admin.ts'

/** A running gateway: mount `routes()` (or `router`) in a Koa app; `close()` when done. */
export interface Gateway {
  /** The gateway's @koa/router, to mount under a prefix with another router. */
  router: Router
  /** Koa middleware serving the gateway's routes (and JSON 405/501 for wrong methods on them, src/http/wrong-method.ts); a host Router's `use('/prefix', gateway.routes())` mounts them under its prefix, as it does `router.routes()`. */
  routes(): Middleware
  /** Typed events for observability: `message`, `device-status`, `delivery`, `delivery-failed`, `send`, `lease`, `forward`, `request` (src/events.ts). */
  events: GatewayEvents
  /** Webhook deliveries: dead letters (read, redrive, discard) and the backlog. */
  webhooks: WebhookAdmin
  /** Accounts, for the host that owns billing: renew a plan, rotate a key, suspend and resume. */
  accounts: AccountAdmin
  /** Resolves once stored devices have been resumed on the transport. */
  ready: Promise<void>
  /** The prom-client Registry behind `/metrics` (only with the `metrics` option). */
  metrics?: Registry
  /**
   * The devices of the account of `authkey` whose id, appkey or name is `ref`: none, one, or several
   * when `ref` is one device's name and another's appkey. Undefined for an unknown or expired
   * authkey; never a device whose deletion was cut short (as operation 5 answers 404 for it). For tools
   * beside the API, such as the simulator's routes.
   */
  findDevices(authkey: string, ref: string): Promise<DeviceSummary[] | undefined>
  /**
   * Shut down: new requests on the gateway's routes are answered 503 (`Connection: close`), those in
   * flight are answered (waiting up to `graceMs`, default the `shutdownGraceMs` option), then the
   * sessions close (without unlinking), queues and the outbox are flushed and the store it created
   * released. Stop your server accepting connections first (`server.close()`), and close the
   * remaining connections once this resolves (`server.closeAllConnections()`).
   */
  close(options?: { graceMs?: number }): Promise<void>
}

/** A device as findDevices tells it. */
export interface DeviceSummary {
  id: string
  name: string
  /** The linked phone number, once known: none once the phone has logged the device out, nor while it is linked anew (as operation 5's `telefone`). */
  phone?: string
  connected: boolean
}

/** Create a gateway. Every option has a default; see GatewayOptions. */
export async function createGateway(options: GatewayOptions = {}): Promise<Gateway> {
  // Every option is resolved here, once (defaults filled in, bad values refused): the rest reads only the result.
  const wiring = await wireGateway(resolveOptions(options))
  const { resolved, logger, storage, transport, devices, messaging, outbox, events } = wiring
  const drain = new RequestDrain(resolved.httpStatus)
  const front = frontSteps(events, drain)
  const router = buildRouter(operationTable, {
    ...wiring,
    front,
    services: wiring,
    httpStatus: resolved.httpStatus,
    bodyLimitBytes: resolved.bodyLimitBytes,
    bodyTimeoutMs: resolved.bodyTimeoutMs,
    baseUrl: resolved.baseUrl,
    ...(resolved.cluster
      ? { cluster: { secret: resolved.cluster.secret, advertiseUrl: resolved.cluster.advertiseUrl, instances: wiring.instances, events } }
      : {}),
  })
  // A start that fails past the wiring (metrics refused) stops what the wiring started: nothing of it is left live on the store.
  const metrics = await addServiceRoutes(
    router,
    {
      storage,
      transport,
      logger,
      events,
      devices,
      messaging,
      instances: wiring.instances,
      leases: wiring.leases,
      baseUrl: resolved.baseUrl,
      front: compose<Context>(front),
    },
    operationTable,
    outbox,
    resolved.service,
  ).catch(async err => {
    await wiring.close().catch(closeErr => logger.error({ err: closeErr }, 'stopping a gateway that failed to start failed'))
    throw err
  })
  const ready = wiring.balancer.start().then(
    () => logger.info({ count: wiring.leases.count }, 'devices resumed'),
    err => logger.error({ err }, 'resuming devices failed'),
  )
  void ready.then(() => messaging.start())
  let closed: Promise<void> | undefined

  const gateway: Gateway = {
    router,
    routes() {
      const routes = router.routes() as unknown as Middleware
      const methods = router.allowedMethods() as unknown as Middleware
      // `router` marks it as a router's routes(): a host Router's use(prefix, ...) then mounts the gateway's routes under its prefix (a plain middleware would see the whole path and match none).
      return Object.assign((ctx: Context, next: () => Promise<unknown>) => routes(ctx, () => methods(ctx, next)), { router })
    },
    events,
    webhooks: outbox,
    accounts: accountAdminOf(wiring.accounts),
    metrics: metrics?.registry,
    ready,
    async findDevices(authkey, ref) {
      const account = await wiring.accounts.authenticate(authkey)
      if (!account) return undefined
      const found = new Map<string, DeviceSummary>()
      for (const match of ['id', 'appkey', 'name'] as const) {
        const device = await devices.find(account, ref, [match])
        // A device whose deletion was cut short is found by operation 6 alone (docs/decisions.md, "Deleting a device").
        if (device && !device.removing)
          found.set(device.id, {
            id: device.id,
            name: device.name,
            ...(device.phone && device.linked ? { phone: device.phone } : {}),
            connected: device.connected,
          })
      }
      return [...found.values()]
    },
    close(closeOptions = {}) {
      closed ??= (async () => {
        const left = await drain.drain(Math.min(closeOptions.graceMs ?? resolved.shutdownGraceMs, 2 ** 31 - 1)) // a longer timer fires at once
        if (left > 0) logger.warn({ requests: left }, 'shutdown grace time over: requests still in flight')
        await ready
        metrics?.close()
        await wiring.close()
      })()
      return closed
    },
  }
  rememberInternals(gateway, wiring)
  return gateway
}
