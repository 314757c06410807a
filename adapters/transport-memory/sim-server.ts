import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Koa from 'koa'
import type { Logger } from 'zapgate'
import { deviceRoutes } from './device-routes.ts'
import { MemoryNetwork } from './network.ts'
import { simulatorRoutes } from './sim-routes.ts'
import type { MemoryNetworkOptions } from './types.ts'

/** Options of simulatorServer. */
export interface SimulatorServerOptions {
  /** TCP port (default 4000; 0 picks a free one). */
  port?: number
  /** Interface to listen on (default: every interface). */
  host?: string
  /** The network to serve (default: a new one with `networkOptions`). */
  network?: MemoryNetwork
  networkOptions?: MemoryNetworkOptions
  /** How long a message waits for the gateway's ack before the device's next one goes (default 5000 ms). */
  ackWaitMs?: number
  /**
   * Messages a device connection may leave unacked (never acked, or acked with an error) before its
   * stream is ended; the gateway reconnects and gets them again (default 1000).
   */
  unackedLimit?: number
  /** Where unexpected errors are logged. */
  logger?: Logger
}

/** A running simulator server. */
export interface SimulatorServer {
  /** `http://127.0.0.1:<port>` (or the host given): what gateways take as `simUrl`. */
  url: string
  port: number
  network: MemoryNetwork
  server: Server
  /** End every device stream and stop listening. */
  close(): Promise<void>
}

/**
 * The simulated network as a server of its own (`npm run sim`), which any number of gateway
 * processes join with `memoryTransport({ simUrl })` (`GATEWAY_SIM_URL`): the phone routes of
 * `/_sim` (scan by code or QR, send, inbox, groups, phones, unlink by device id, stats) and the
 * device protocol of docs/simulator.md. One live connection per linked device: a device that
 * connects again, from any process, closes the older connection as `replaced`.
 */
export async function simulatorServer(options: SimulatorServerOptions = {}): Promise<SimulatorServer> {
  const network = options.network ?? new MemoryNetwork(options.networkOptions)
  const phones = simulatorRoutes(network, { logger: options.logger })
  const devices = deviceRoutes(network, { ackWaitMs: options.ackWaitMs, unackedLimit: options.unackedLimit, logger: options.logger })
  const app = new Koa()
  // A gateway going away mid-stream is ordinary here; anything else is logged (and Koa's console output stays off).
  app.on('error', (err: NodeJS.ErrnoException) => {
    if (err?.code !== 'ERR_STREAM_PREMATURE_CLOSE' && err?.code !== 'ECONNRESET' && err?.code !== 'EPIPE')
      options.logger?.error({ err }, 'simulator server error')
  })
  app.use(phones.routes()).use(phones.allowedMethods())
  app.use(devices.router.routes()).use(devices.router.allowedMethods())
  const server = app.listen(options.port ?? 4000, options.host)
  // Gateways keep their connections alive: outlive their idle time, so a reused one is never closed under them.
  server.keepAliveTimeout = 65_000
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject))
  const port = (server.address() as AddressInfo).port
  const host = options.host && options.host !== '0.0.0.0' && options.host !== '::' ? options.host : '127.0.0.1'
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    network,
    server,
    async close() {
      devices.close()
      const closed = new Promise(resolve => server.close(resolve))
      server.closeAllConnections()
      await closed
    },
  }
}
