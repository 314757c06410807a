/**
 * The ready-to-run gateway server (`npm start`). Configuration comes from the environment:
 *
 *   PORT                         HTTP port (default 3000)
 *   GATEWAY_TRANSPORT            baileys (default) | memory (the simulated network, with /_sim routes)
 *   GATEWAY_PROXY_URL            baileys: proxy for all WhatsApp traffic (http://, https://, socks5://)
 *   GATEWAY_STORE                store URL: sqlite://path (default sqlite://./data/gateway.sqlite),
 *                                redis://..., postgres://..., memory://
 *   GATEWAY_BASE_URL             public URL of the server, for QR share links
 *   GATEWAY_ALLOW_PRIVATE_URLS   1: webhook and media URLs may reach loopback/private addresses
 *   GATEWAY_WEBHOOK_RETRY_MS     comma-separated webhook retry delays in ms (default
 *                                5000,300000,1800000,7200000,18000000,36000000,50400000,72000000,86400000)
 *   GATEWAY_TIME_ZONE            IANA zone for agendamento and expiracao (default UTC)
 *   GATEWAY_OTP_SECRET           key of stored OTP hashes (default: random per process)
 *   GATEWAY_MIN_INTERVAL_MS      pause between two sends of one device (default 0; e.g. 1000)
 *   GATEWAY_INTERVAL_JITTER_MS   random extra pause up to this many ms (default 0; e.g. 1000)
 *   GATEWAY_METRICS              1: serve Prometheus metrics at /metrics
 *   GATEWAY_DOCS                 0: serve neither /openapi.json nor the /docs page
 *   GATEWAY_SIM_LOG_LIMIT        memory transport: messages the simulated network remembers (default 100000)
 *   GATEWAY_RATE_LIMIT           off | <points>/<seconds> per account key (default 3000/60; the other
 *                                limits keep their defaults). With a redis:// store the counters live
 *                                in that Redis, shared by every process on it.
 *   LOG_LEVEL                    pino level (default info)
 */
import Koa from 'koa'
import pino from 'pino'
import type { Server } from 'node:http'
import { createGateway, parseRateLimit, parseRetrySchedule, redactPaths, type GatewayOptions, type RateLimitStore, type Transport } from 'zapgate'
import { storageFromUrl } from 'zapgate/adapters/storage-keyv'
import { redisRateLimitStore } from 'zapgate/adapters/rate-limit-redis'

const env = process.env
const logger = pino({
  level: env.LOG_LEVEL ?? 'info',
  redact: { paths: redactPaths, censor: '[redacted]' },
})

async function main(): Promise<void> {
  const port = Number(env.PORT ?? 3000)
  const transportName = env.GATEWAY_TRANSPORT ?? 'baileys'
  const storeUrl = env.GATEWAY_STORE ?? 'sqlite://./data/gateway.sqlite'
  const storage = await storageFromUrl(storeUrl)
  const allowPrivateUrls = env.GATEWAY_ALLOW_PRIVATE_URLS === '1' || env.GATEWAY_ALLOW_PRIVATE_URLS === 'true'
  const rateLimitStore: RateLimitStore | undefined = /^rediss?:/i.test(storeUrl) ? await redisRateLimitStore({ url: storeUrl }) : undefined

  const app = new Koa({ proxy: env.GATEWAY_TRUST_PROXY === '1' })
  let transport: Transport
  let mountSimulator: ((gateway: Awaited<ReturnType<typeof createGateway>>) => void) | undefined
  if (transportName === 'memory') {
    const { MemoryNetwork, memoryTransport, simulatorRoutes } = await import('zapgate/adapters/transport-memory')
    const network = new MemoryNetwork(env.GATEWAY_SIM_LOG_LIMIT ? { logLimit: Number(env.GATEWAY_SIM_LOG_LIMIT) } : {})
    transport = memoryTransport({ network })
    mountSimulator = gateway => {
      const sim = simulatorRoutes(network, {
        resolveDevice: async ({ appkey }) => (appkey ? (await gateway.services.devices.findAnywhere(appkey))?.id : undefined),
      })
      app.use(sim.routes())
    }
  } else if (transportName === 'baileys') {
    transport = await loadBaileys()
  } else {
    throw new Error(`GATEWAY_TRANSPORT must be baileys or memory, not ${JSON.stringify(transportName)}`)
  }

  const options: GatewayOptions = {
    storage,
    transport,
    logger,
    allowPrivateUrls,
    baseUrl: env.GATEWAY_BASE_URL,
    ...(env.GATEWAY_WEBHOOK_RETRY_MS ? { webhookRetryMs: parseRetrySchedule(env.GATEWAY_WEBHOOK_RETRY_MS) } : {}),
    ...(env.GATEWAY_TIME_ZONE ? { timeZone: env.GATEWAY_TIME_ZONE } : {}),
    ...(env.GATEWAY_OTP_SECRET ? { otpSecret: env.GATEWAY_OTP_SECRET } : {}),
    ...(env.GATEWAY_MIN_INTERVAL_MS ? { minIntervalMs: Number(env.GATEWAY_MIN_INTERVAL_MS) } : {}),
    ...(env.GATEWAY_INTERVAL_JITTER_MS ? { intervalJitterMs: Number(env.GATEWAY_INTERVAL_JITTER_MS) } : {}),
    ...(env.GATEWAY_METRICS === '1' || env.GATEWAY_METRICS === 'true' ? { metrics: true } : {}),
    ...(env.GATEWAY_DOCS === '0' || env.GATEWAY_DOCS === 'false' ? { docs: false } : {}),
    ...(env.GATEWAY_RATE_LIMIT ? { rateLimit: parseRateLimit(env.GATEWAY_RATE_LIMIT) } : {}),
    ...(rateLimitStore ? { rateLimitStore } : {}),
  }
  const gateway = await createGateway(options)
  mountSimulator?.(gateway)
  app.use(gateway.routes())
  const server: Server = app.listen(port)
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject))
  logger.info({ port, transport: transportName, store: redactUrl(storeUrl) }, `gateway listening on http://localhost:${port}`)

  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'shutting down')
    server.close()
    server.closeAllConnections?.()
    await gateway.close()
    await rateLimitStore?.close?.()
    await storage.close?.()
    logger.info('stopped')
    process.exit(0)
  }
  process.once('SIGINT', () => void stop('SIGINT'))
  process.once('SIGTERM', () => void stop('SIGTERM'))
}

async function loadBaileys(): Promise<Transport> {
  const path = 'zapgate/adapters/transport-baileys'
  const { baileysTransport } = (await import(path).catch(cause => {
    throw new Error('The Baileys transport is not available in this build yet. Run with GATEWAY_TRANSPORT=memory for the simulated network.', { cause })
  })) as { baileysTransport: (options?: object) => Transport }
  // At start the transport logs whether WhatsApp can be reached (through the proxy, if any).
  return baileysTransport({ printQrInTerminal: true, checkReachability: true, ...(env.GATEWAY_PROXY_URL ? { proxy: env.GATEWAY_PROXY_URL } : {}) })
}

function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@')
}

main().catch(err => {
  logger.fatal({ err }, err instanceof Error ? err.message : 'start-up failed')
  process.exit(1)
})
