/**
 * The ready-to-run gateway server (`npm start`). Configuration comes from the environment:
 *
 *   PORT                         HTTP port (default 3000)
 *   GATEWAY_TRANSPORT            baileys (default) | memory (the simulated network, with /_sim routes)
 *   GATEWAY_SIM_URL              memory: join the simulator server at this URL (`npm run sim`) instead
 *                                of a network of this process (its /_sim routes are then the server's)
 *   GATEWAY_STORE                store URL: sqlite://path (default sqlite://./data/gateway.sqlite,
 *                                sqlite://./data/gateway-memory.sqlite on the simulated network,
 *                                memory:// with GATEWAY_WA_PEER=local, sqlite://./data/gateway-wa-peer.sqlite
 *                                with a peer server),
 *                                redis://..., postgres://..., memory://
 *   GATEWAY_STORE_NAMESPACE      prefix of the gateway's keys in a shared Redis or SQL store (default zapgate)
 *   GATEWAY_PROXY_URL            baileys: proxy for all WhatsApp traffic (http://, https://, socks5://)
 *   GATEWAY_WA_PEER              baileys, offline: local (the real Baileys stack against a WhatsApp peer in
 *                                this process, with the /_sim phone routes) or http://host:port of a peer
 *                                server (`npm run wa-peer`); unset: real WhatsApp (docs/wa-peer.md)
 *   GATEWAY_CLUSTER_SECRET       cluster mode (several instances on one Redis or PostgreSQL): the secret they share
 *   GATEWAY_ADVERTISE_URL        cluster mode: where the other instances reach this one (default http://<host name>:PORT)
 *   GATEWAY_MAX_DEVICES          cluster mode: most device sessions this instance holds (default: no limit; refused without GATEWAY_CLUSTER_SECRET)
 *   GATEWAY_LEASE_TTL_MS         an instance silent this long is gone: in cluster mode its devices and work pass to the others, and a
 *                                restart on the store waits at most this long for its own last record to lapse (default 15000; 400 to 3600000)
 *   GATEWAY_HTTP_STATUS          mirror (default: HTTP code = body status) | always200
 *   GATEWAY_AGENT_URL            the agents' HTTP service: each incoming text on a device with an agent
 *                                is POSTed there as JSON, the answer's text is the reply (without it,
 *                                agents keep the conversation but never answer)
 *   GATEWAY_BASE_URL             public URL of the server, for QR share links
 *   GATEWAY_ALLOW_PRIVATE_URLS   1: webhook and media URLs may reach loopback/private addresses
 *   GATEWAY_WEBHOOK_RETRY_MS     comma-separated webhook retry delays in ms (default
 *                                5000,300000,1800000,7200000,18000000,36000000,50400000,72000000,86400000)
 *   GATEWAY_TIME_ZONE            IANA zone for agendamento and expiracao (default UTC)
 *   GATEWAY_OTP_SECRET           key of stored OTP hashes (default: random per process)
 *   GATEWAY_MIN_INTERVAL_MS      pause between two sends of one device (default 0; e.g. 1000; at most 3600000)
 *   GATEWAY_INTERVAL_JITTER_MS   random extra pause up to this many ms (default 0; e.g. 1000; at most 3600000)
 *   GATEWAY_METRICS              1: serve Prometheus metrics at /metrics
 *   GATEWAY_DOCS                 0: serve neither /openapi.json nor the /docs page
 *   GATEWAY_SIM_LOG_LIMIT        memory transport: messages the simulated network remembers (default 100000; at most 10000000)
 *   GATEWAY_RATE_LIMIT           off | <points>/<seconds> per account key (default 3000/60; the other
 *                                limits keep their defaults). With a redis:// or postgres:// store the
 *                                counters live in that store, shared by every process on it.
 *   GATEWAY_TRUST_PROXY          <n>: the server is behind n proxies (1: one load balancer); the client's IP,
 *                                for the per-IP limits, is the n-th address from the right of
 *                                X-Forwarded-For (default 0: the connection's address, the header ignored)
 *   GATEWAY_BODY_TIMEOUT_MS      a request body not received whole within this time is answered 408 (default 30000; at most 2147483647, a Node timer's limit)
 *   GATEWAY_MEDIA_BUDGET_MB      most MB of media in flight in the process; a send past it is answered 429 (default 200)
 *   GATEWAY_SHARE_LINK_TTL_MS    how long a QR share link works (default 86400000, 24 h; at most 365 days)
 *   GATEWAY_SHUTDOWN_GRACE_MS    on SIGTERM/SIGINT, how long requests in flight have to be answered before
 *                                the sessions close (default 10000; at most 2147483647). Later signals are
 *                                ignored (npm and a group stop send two); a second Ctrl-C in a terminal ends it at once
 *   LOG_LEVEL                    pino level (default info)
 */
import Koa, { type Middleware } from 'koa'
import compose from 'koa-compose'
import type Router from '@koa/router'
import pino from 'pino'
import type { Server } from 'node:http'
import { Server as NetServer, type AddressInfo } from 'node:net'
import { hostname } from 'node:os'
import { createGateway, type Gateway, type GatewayOptions, type Transport } from 'zapgate'
import { storageFromUrl } from 'zapgate/adapters/storage-keyv'
import { httpAgentResponder } from 'zapgate/adapters/agent-http'
import { checkWaPeer, waPeerMode, type WaPeerMode } from './wa-peer-mode.ts'
import {
  defaultStore,
  logLevel,
  parseBaseUrl,
  parseCount,
  parseFlag,
  parseMegabytes,
  parseMs,
  parsePort,
  parseRateLimit,
  parseRetrySchedule,
  parseTimeZone,
  redactPaths,
  simLogLimit,
  trustProxy,
} from './env-config.ts'
import { handleShutdownSignals } from './shutdown-signals.ts'

const env = process.env
const logger = pino({
  level: logLevel(env.LOG_LEVEL),
  redact: { paths: redactPaths, censor: '[redacted]' },
})
// Every SIGTERM/SIGINT of the process's life: the first drains, later ones are ignored (a second Ctrl-C exits).
const signals = handleShutdownSignals(logger)

async function main(): Promise<void> {
  const port = parsePort(env.PORT, 3000)
  const transportName = env.GATEWAY_TRANSPORT ?? 'baileys'
  if (transportName !== 'baileys' && transportName !== 'memory')
    throw new Error(`GATEWAY_TRANSPORT must be baileys or memory, not ${JSON.stringify(transportName)}`)
  const httpStatus = env.GATEWAY_HTTP_STATUS ?? 'mirror'
  if (httpStatus !== 'mirror' && httpStatus !== 'always200')
    throw new Error(`GATEWAY_HTTP_STATUS must be mirror or always200, not ${JSON.stringify(httpStatus)}`)
  // The simulated network keeps its devices in a file of its own: never mixed with real WhatsApp sessions.
  // The same for the WhatsApp peer; a peer in this process forgets its devices when it stops, so its store does too.
  // Empty is unset, as for the other variables: storageFromUrl('') is a memory store, lost at every restart.
  const storeUrl = env.GATEWAY_STORE || defaultStore(transportName, env.GATEWAY_WA_PEER)
  if (transportName === 'baileys' && env.GATEWAY_WA_PEER) checkWaPeer(env.GATEWAY_WA_PEER)
  const allowPrivateUrls = parseFlag(env.GATEWAY_ALLOW_PRIVATE_URLS, 'GATEWAY_ALLOW_PRIVATE_URLS', false)
  const agent = env.GATEWAY_AGENT_URL ? httpAgentResponder({ url: env.GATEWAY_AGENT_URL, allowPrivateUrls }) : undefined

  // Every value is read (a bad one refused, naming its variable) before anything is bound or opened.
  // A device's pause: at most an hour each (a send queued behind a longer one only waits for its time-out, and a shutdown for the pause).
  const pacing = { max: 3_600_000 }
  const networkOptions = simLogLimit(env.GATEWAY_SIM_LOG_LIMIT)
  const cluster = clusterSettings()
  const settings: GatewayOptions = {
    allowPrivateUrls,
    httpStatus,
    baseUrl: parseBaseUrl(env.GATEWAY_BASE_URL),
    ...(agent ? { agentResponder: agent } : {}),
    ...(env.GATEWAY_WEBHOOK_RETRY_MS ? { webhookRetryMs: parseRetrySchedule(env.GATEWAY_WEBHOOK_RETRY_MS) } : {}),
    ...(env.GATEWAY_TIME_ZONE ? { timeZone: parseTimeZone(env.GATEWAY_TIME_ZONE) } : {}),
    ...(env.GATEWAY_OTP_SECRET ? { otpSecret: env.GATEWAY_OTP_SECRET } : {}),
    ...(env.GATEWAY_MIN_INTERVAL_MS ? { minIntervalMs: parseMs(env.GATEWAY_MIN_INTERVAL_MS, 'GATEWAY_MIN_INTERVAL_MS', pacing) } : {}),
    ...(env.GATEWAY_INTERVAL_JITTER_MS ? { intervalJitterMs: parseMs(env.GATEWAY_INTERVAL_JITTER_MS, 'GATEWAY_INTERVAL_JITTER_MS', pacing) } : {}),
    ...(parseFlag(env.GATEWAY_METRICS, 'GATEWAY_METRICS', false) ? { metrics: true } : {}),
    ...(parseFlag(env.GATEWAY_DOCS, 'GATEWAY_DOCS', true) ? {} : { docs: false }),
    ...(env.GATEWAY_RATE_LIMIT ? { rateLimit: parseRateLimit(env.GATEWAY_RATE_LIMIT) } : {}),
    ...(env.GATEWAY_BODY_TIMEOUT_MS ? { bodyTimeoutMs: parseMs(env.GATEWAY_BODY_TIMEOUT_MS, 'GATEWAY_BODY_TIMEOUT_MS', { min: 1 }) } : {}),
    ...(env.GATEWAY_MEDIA_BUDGET_MB ? { mediaBytesInFlight: parseMegabytes(env.GATEWAY_MEDIA_BUDGET_MB, 'GATEWAY_MEDIA_BUDGET_MB') } : {}),
    ...(env.GATEWAY_SHUTDOWN_GRACE_MS ? { shutdownGraceMs: parseMs(env.GATEWAY_SHUTDOWN_GRACE_MS, 'GATEWAY_SHUTDOWN_GRACE_MS') } : {}),
    // A store's time-to-live, not a timer: up to a year.
    ...(env.GATEWAY_SHARE_LINK_TTL_MS
      ? { shareLinkTtlMs: parseMs(env.GATEWAY_SHARE_LINK_TTL_MS, 'GATEWAY_SHARE_LINK_TTL_MS', { min: 1, max: 365 * 86_400_000 }) }
      : {}),
  }

  // What the start opens, each with how to close it. When a later step fails (createGateway refusing an option,
  // another live instance on a single-process store...), those opened are closed, newest first, before the
  // process exits with the one line saying why: the port freed, the store's connections ended, its SQLite log
  // checkpointed and removed.
  const opened: (() => unknown)[] = agent ? [() => agent.close()] : []
  try {
    await start()
  } catch (err) {
    for (const close of opened.reverse())
      await Promise.resolve()
        .then(close)
        .catch(error => logger.warn({ err: error }, 'closing after a failed start'))
    throw err
  }

  async function start(): Promise<void> {
    // The port is bound before the store is opened and the devices resumed: a port in use stops the start with
    // nothing to close (no session, lease or instance record left behind), and in cluster mode the others can
    // reach this instance as soon as it registers. A request that comes while the gateway starts waits for it.
    const app = new Koa(trustProxy(env.GATEWAY_TRUST_PROXY))
    let serve!: (routes: Middleware) => void
    const started = new Promise<Middleware>(resolve => (serve = resolve))
    app.use(async (ctx, next) => (await started)(ctx, next))
    const server = await listen(app, port)
    opened.push(() => {
      server.closeAllConnections()
      return new Promise(resolve => server.close(resolve))
    })
    const listening = (server.address() as AddressInfo).port // PORT=0: the port the system chose

    // The store's URL and namespace are checked as it opens: a refusal names the variables.
    const storage = await storageFromUrl(storeUrl, {
      ...(env.GATEWAY_STORE_NAMESPACE ? { namespace: env.GATEWAY_STORE_NAMESPACE } : {}),
      onWarning: message => logger.warn({ store: 'redis' }, message),
    }).catch((err: Error) => {
      throw new Error(`GATEWAY_STORE${env.GATEWAY_STORE_NAMESPACE ? ' (GATEWAY_STORE_NAMESPACE)' : ''}: ${err.message}`, { cause: err })
    })
    opened.push(() => storage.close?.())
    let transport: Transport
    let simulator: ((gateway: Gateway) => Router) | undefined
    let peerMode: WaPeerMode | undefined
    if (transportName === 'memory' && env.GATEWAY_SIM_URL) {
      const { memoryTransport } = await import('zapgate/adapters/transport-memory')
      transport = memoryTransport({ simUrl: env.GATEWAY_SIM_URL })
    } else if (transportName === 'memory') {
      const { MemoryNetwork, memoryTransport, simulatorRoutes } = await import('zapgate/adapters/transport-memory')
      const network = new MemoryNetwork(networkOptions)
      transport = memoryTransport({ network })
      simulator = gateway => simulatorRoutes(network, { findDevices: gateway.findDevices, logger })
    } else if (env.GATEWAY_WA_PEER) {
      const mode = (peerMode = await waPeerMode(env.GATEWAY_WA_PEER, logger))
      opened.push(() => mode.close())
      transport = peerMode.transport
      simulator = peerMode.phoneRouter
    } else {
      const { baileysTransport } = await import('zapgate/adapters/transport-baileys')
      // At start the transport logs whether WhatsApp can be reached (through the proxy, if any).
      transport = baileysTransport({ printQrInTerminal: true, checkReachability: true, ...(env.GATEWAY_PROXY_URL ? { proxy: env.GATEWAY_PROXY_URL } : {}) })
    }

    const options: GatewayOptions = { storage, transport, logger, ...settings, ...clusterOptions(cluster, listening) }
    const gateway = await createGateway(options)
    // The /_sim routes first (@koa/router types its context with params Koa's lacks: cast as src/gateway.ts does).
    serve(compose([...(simulator ? [simulator(gateway).routes() as unknown as Middleware] : []), gateway.routes()]))
    logger.info(
      {
        port: listening,
        transport: transportName,
        ...(env.GATEWAY_SIM_URL && transportName === 'memory' ? { sim: redactUrl(env.GATEWAY_SIM_URL) } : {}),
        ...(peerMode ? { peer: peerMode.describe } : {}),
        store: redactUrl(storeUrl),
        agent: agent ? redactUrl(env.GATEWAY_AGENT_URL!) : 'none',
      },
      `gateway listening on http://localhost:${listening}`,
    )

    signals.ready(async signal => {
      logger.info({ signal }, 'shutting down')
      // No new connections; the requests in flight are answered (up to the grace time), a request
      // arriving meanwhile on a kept-alive connection gets 503 and `Connection: close`. Only the
      // listening socket is closed here: http.Server#close would also drop the idle kept-alive
      // connections at once, racing a request a client is sending on one (a socket error, no answer).
      NetServer.prototype.close.call(server)
      await gateway.close()
      server.closeAllConnections()
      await storage.close?.()
      await peerMode?.close()
      agent?.close()
      logger.info('stopped')
      logger.flush(() => process.exit(0))
    })
  }
}

/** The instances' and cluster mode's numbers, read before anything is opened: GATEWAY_LEASE_TTL_MS (any store) and GATEWAY_MAX_DEVICES (cluster mode only, refused without it). */
function clusterSettings(): { secret?: string; maxDevices?: number; ttlMs?: number } {
  if (env.GATEWAY_MAX_DEVICES && !env.GATEWAY_CLUSTER_SECRET)
    throw new Error('GATEWAY_MAX_DEVICES limits an instance of a cluster: set GATEWAY_CLUSTER_SECRET too, or unset it')
  return {
    ...(env.GATEWAY_CLUSTER_SECRET ? { secret: env.GATEWAY_CLUSTER_SECRET } : {}),
    ...(env.GATEWAY_MAX_DEVICES ? { maxDevices: parseCount(env.GATEWAY_MAX_DEVICES, 'GATEWAY_MAX_DEVICES') } : {}),
    // At least twice the heartbeat (ttl / 5, 200 ms at least), as createGateway requires; at most an hour, which is
    // already how long a dead instance's devices stay offline, and a restart on the store waits for its lapse.
    ...(env.GATEWAY_LEASE_TTL_MS ? { ttlMs: parseMs(env.GATEWAY_LEASE_TTL_MS, 'GATEWAY_LEASE_TTL_MS', { min: 400, max: 3_600_000 }) } : {}),
  }
}

/** The instance options (GATEWAY_LEASE_TTL_MS) and cluster mode's, with GATEWAY_ADVERTISE_URL (default http://<host name>:<port>). */
function clusterOptions(cluster: ReturnType<typeof clusterSettings>, port: number): Pick<GatewayOptions, 'cluster' | 'instances'> {
  const { secret, maxDevices, ttlMs } = cluster
  return {
    ...(secret
      ? { cluster: { secret, advertiseUrl: env.GATEWAY_ADVERTISE_URL ?? `http://${hostname()}:${port}`, ...(maxDevices ? { maxDevices } : {}) } }
      : {}),
    ...(ttlMs !== undefined ? { instances: { ttlMs, heartbeatMs: Math.max(200, Math.round(ttlMs / 5)) } } : {}),
  }
}

/** Bind `port`; a port in use or not allowed is one clear line naming PORT, not Node's `listen EADDRINUSE`. */
async function listen(app: Koa, port: number): Promise<Server> {
  const server = app.listen(port)
  try {
    await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject))
    return server
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'EADDRINUSE') throw new Error(`PORT ${port} is in use by another program: stop it, or set PORT to a free port`, { cause: err })
    if (code === 'EACCES') throw new Error(`PORT ${port} needs privileges this process lacks: set PORT to 1024 or above`, { cause: err })
    throw err
  }
}

// The user info ends at the last @ of the authority (a password may hold a raw @, which URLs allow).
function redactUrl(url: string): string {
  return url.replace(/\/\/[^/?#]*@/, '//***@')
}

main().catch(err => {
  logger.fatal({ err }, err instanceof Error ? err.message : 'start-up failed')
  logger.flush(() => process.exit(1))
})
