/**
 * The local WhatsApp peer as a server of its own (`npm run wa-peer`): gateway processes on the real
 * Baileys stack join it offline, e.g.
 *
 *   npm run wa-peer
 *   GATEWAY_TRANSPORT=baileys GATEWAY_WA_PEER=http://127.0.0.1:4100 npm start
 *
 * One port serves the WebSocket Baileys connects to, the certificate root gateways trust
 * (`GET /_peer/root`) and the simulator's phone routes (`/_sim`: scan by `{qr, phone}` or
 * `{code, phone}`, send, inbox, phones, unlink by the device's JID, stats). docs/wa-peer.md.
 * Environment:
 *
 *   PORT        HTTP port (default 4100)
 *   HOST        interface (default 127.0.0.1)
 *   LOG_LEVEL   pino level (default info)
 */
import pino from 'pino'
import { waPeerServer } from 'zapgate/adapters/wa-peer'
import { handleShutdownSignals } from './shutdown-signals.ts'
import { logLevel, parsePort } from './env-config.ts'

const env = process.env
const logger = pino({ level: logLevel(env.LOG_LEVEL) })
// Every SIGTERM/SIGINT of the process's life: the first stops it, later ones are ignored (a second Ctrl-C exits).
const signals = handleShutdownSignals(logger)

async function main(): Promise<void> {
  const server = await waPeerServer({ port: parsePort(env.PORT, 4100), host: env.HOST ?? '127.0.0.1', logger })
  logger.info({ url: server.url }, `WhatsApp peer listening on ${server.url}`)

  signals.ready(async signal => {
    logger.info({ signal, ...server.peer.stats }, 'shutting down')
    await server.close()
    logger.info('stopped')
    logger.flush(() => process.exit(0))
  })
}

main().catch(err => {
  logger.fatal({ err }, err instanceof Error ? err.message : 'start-up failed')
  process.exit(1)
})
