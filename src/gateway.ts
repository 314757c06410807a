import type Router from '@koa/router'
import type { Registry } from 'prom-client'
import type { Context, Middleware } from 'koa'
import { Accounts } from './domain/accounts.ts'
import { Agents } from './domain/agents.ts'
import { Devices } from './domain/devices.ts'
import { ShareLinks } from './domain/share-links.ts'
import { MessageFeed } from './domain/message-feed.ts'
import { MediaLinks } from './domain/media-links.ts'
import { FlowConversations } from './domain/flows.ts'
import { startAgents } from './domain/agent-runner.ts'
import { startWebhookOutbox, type WebhookAdmin } from './domain/webhooks/index.ts'
import { createMessaging } from './domain/messaging/index.ts'
import { defaultAdapters } from './defaults.ts'
import { GatewayEvents } from './events.ts'
import { buildRouter } from './http/router.ts'
import { addServiceRoutes } from './http/service-routes.ts'
import { childLogger, silentLogger } from './logger.ts'
import { operationTable } from './operations/table.ts'
import { resolveOptions, type GatewayOptions } from './options.ts'
import { prefixedStorage } from './ports/storage.ts'
import type { IncomingMessage, TransportEvent } from './ports/transport.ts'
import type { Services } from './services.ts'
import { guardStorage } from './store/guarded-storage.ts'
import { guardTransport } from './domain/guarded-transport.ts'
import { memoryRateLimitStore, RateLimits } from './security/rate-limits.ts'
import { KeyedLock } from './store/keyed-lock.ts'

/** A running gateway: mount `routes()` (or `router`) in a Koa app; `close()` when done. */
export interface Gateway {
  /** The gateway's @koa/router, to mount under a prefix with another router. */
  router: Router
  /** Koa middleware serving the gateway's routes (and 405/501 for wrong methods on them). */
  routes(): Middleware
  /** Typed events for observability: `message`, `device-status`, `delivery`, `delivery-failed`. */
  events: GatewayEvents
  /** Webhook deliveries: dead letters (read, redrive, discard) and the backlog. */
  webhooks: WebhookAdmin
  /** Resolves once stored devices have been resumed on the transport. */
  ready: Promise<void>
  /** The prom-client Registry behind `/metrics` (only with the `metrics` option). */
  metrics?: Registry
  /** The wired services (advanced: tools such as the simulator reach the domain through them). */
  services: Services
  /** Close sessions (without unlinking), flush queues, release the store it created. */
  close(): Promise<void>
}

/** Create a gateway. Every option has a default; see GatewayOptions. */
export async function createGateway(options: GatewayOptions = {}): Promise<Gateway> {
  const resolved = resolveOptions(options)
  const logger = options.logger ?? silentLogger
  const adapters = await defaultAdapters(options, resolved)
  const storage = guardStorage(adapters.storage)
  const lock = new KeyedLock()
  const events = new GatewayEvents()
  const { webhooks, media } = adapters
  const transport = guardTransport(adapters.transport, resolved.messaging.sendTimeoutMs)
  const accounts = new Accounts(storage, lock, resolved.plans, resolved.timeZone, resolved.cacheTtlMs)
  const devices = new Devices(storage, lock, transport, events, childLogger(logger, { module: 'devices' }), resolved.cacheTtlMs)
  const agents = new Agents(storage, lock, devices)
  const links = new ShareLinks(storage, lock, devices)
  devices.onRemove(device => links.removeDevice(device))
  devices.onRemove(device => agents.removeDevice(device))
  const mediaLinks = new MediaLinks(storage)
  const feed = new MessageFeed(events, childLogger(logger, { module: 'feed' }))
  const messaging = createMessaging({ options: resolved.messaging, storage, lock, transport, media, devices, feed, events, logger: childLogger(logger, { module: 'messaging' }) })
  devices.onRemove(device => messaging.removeDevice(device))
  const flows = new FlowConversations(storage, lock, resolved.agents.historyLimit)
  const rateLimits = new RateLimits(resolved.rateLimits, options.rateLimitStore ?? memoryRateLimitStore(), childLogger(logger, { module: 'rate-limit' }))
  const services: Services = { options: resolved, logger, storage, lock, transport, webhooks, media, events, accounts, devices, agents, links, feed, flows, messaging, mediaLinks, rateLimits }
  const outbox = startWebhookOutbox(services) // subscribes first: events are stored before anything else
  const agentRunner = startAgents(services)

  async function onTransportEvent(event: TransportEvent): Promise<void> {
    try {
      if (event.type === 'status') {
        await devices.applyStatus(event.deviceId, event.status)
        if (event.status.connected) await links.forgetQr(event.deviceId)
      } else if (event.type === 'qr') {
        await links.rememberQr(event.deviceId, event.qr)
      } else if (event.type === 'message') {
        const device = await devices.get(event.deviceId)
        if (device) await feed.publish(device, await withMediaUrl(event.deviceId, event.message))
      } else if (event.type === 'message-failed') {
        const device = await devices.get(event.deviceId)
        if (device) await outbox.recordFailure(device, event)
      }
    } catch (err) {
      logger.error({ err, event: event.type, deviceId: event.deviceId }, 'transport event not recorded')
    }
  }

  /** Give a media message that carries no bytes a signed URL to fetch them from, when possible. */
  async function withMediaUrl(deviceId: string, message: IncomingMessage): Promise<IncomingMessage> {
    const content = message.content
    const media = content.kind === 'image' || content.kind === 'video' || content.kind === 'audio' || content.kind === 'document'
    if (!media || content.base64 || content.url || !transport.downloadMedia || !resolved.baseUrl) return message
    const token = await mediaLinks.sign({ deviceId, messageId: message.id })
    return { ...message, content: { ...content, url: `${resolved.baseUrl}/media/${token}` } }
  }

  await transport.start({ storage: prefixedStorage(storage, 'transport:'), logger: childLogger(logger, { module: 'transport' }), emit: onTransportEvent })
  const { router, operations, observe } = buildRouter(operationTable, services)
  const metrics = await addServiceRoutes(router, services, operationTable, outbox, options)
  const ready = devices.resumeAll().then(
    count => logger.info({ count }, 'devices resumed'),
    err => logger.error({ err }, 'resuming devices failed'),
  )
  void ready.then(() => messaging.start())
  let closed: Promise<void> | undefined

  return {
    router,
    routes() {
      const routes = router.routes() as unknown as Middleware
      const methods = router.allowedMethods() as unknown as Middleware
      const viaRouter: Middleware = (ctx, next) => routes(ctx, () => methods(ctx, next))
      // A POST to an operation's exact path goes straight to the route the router would pick (after
      // the same observer): matching every route of the router costs more than some operations.
      // Any other request, and every request once the router has a prefix, goes through the router.
      return (ctx, next) => {
        const operation = ctx.method === 'POST' && !router.opts.prefix ? operations.get(ctx.path) : undefined
        if (!operation) return viaRouter(ctx, next)
        matchedAsRouterDoes(ctx, router)
        return observe(ctx, () => operation(ctx, next))
      }
    },
    events,
    webhooks: outbox,
    metrics: metrics?.registry,
    ready,
    services,
    close() {
      closed ??= (async () => {
        await ready
        metrics?.close()
        await agentRunner.close()
        await messaging.close()
        await transport.stop()
        await outbox.close()
        await webhooks.close?.()
        if (adapters.ownsStorage) await adapters.storage.close?.()
        events.removeAllListeners()
      })()
      return closed
    },
  }
}

/**
 * What @koa/router puts on the context of a request matching a route without parameters (the
 * operation paths have none), so a request dispatched straight to its route looks the same to the
 * host's middleware: the route's path, the params so far (none of its own) and no captures, the router.
 */
function matchedAsRouterDoes(ctx: Context, router: Router): void {
  const routed = ctx as Context & { _matchedRoute?: string; routerPath?: string; params?: object; captures?: string[]; router?: Router }
  routed._matchedRoute = ctx.path
  routed.routerPath = ctx.path
  routed.captures = []
  routed.params = (ctx.request as { params?: object }).params = { ...routed.params } // an enclosing router's params kept, as @koa/router keeps them
  routed.router = router
}
