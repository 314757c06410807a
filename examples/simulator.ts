/**
 * The simulated WhatsApp network as a server of its own (`npm run sim`): several gateway processes
 * join it and share one network, e.g.
 *
 *   npm run sim
 *   GATEWAY_TRANSPORT=memory GATEWAY_SIM_URL=http://127.0.0.1:4000 npm start
 *
 * It serves the phone routes of `/_sim` (scan by `{code, phone}` or `{qr, phone}`, send, inbox,
 * groups, phones, unlink by `{deviceId}`, `GET /_sim/stats`) and the device protocol the gateways
 * speak (docs/simulator.md). Environment:
 *
 *   PORT                    HTTP port (default 4000)
 *   GATEWAY_SIM_LOG_LIMIT   messages the network remembers (default 100000; at most 10000000)
 *   LOG_LEVEL               pino level (default info)
 */
import pino from 'pino'
import { simulatorServer } from 'zapgate/adapters/transport-memory'
import { handleShutdownSignals } from './shutdown-signals.ts'
import { logLevel, parsePort, simLogLimit } from './env-config.ts'

const env = process.env
const logger = pino({ level: logLevel(env.LOG_LEVEL) })
// Every SIGTERM/SIGINT of the process's life: the first stops it, later ones are ignored (a second Ctrl-C exits).
const signals = handleShutdownSignals(logger)
// Started by `npm run cluster` (an IPC channel to it), in a process group of its own: it ends when that process goes (killed), its output gone with it.
if (process.channel) process.once('disconnect', () => process.exit(0))

async function main(): Promise<void> {
  const port = parsePort(env.PORT, 4000)
  const sim = await simulatorServer({ port, networkOptions: simLogLimit(env.GATEWAY_SIM_LOG_LIMIT), logger })
  logger.info({ port: sim.port }, `simulator listening on http://localhost:${sim.port}`)

  signals.ready(async signal => {
    logger.info({ signal, ...sim.network.stats() }, 'shutting down')
    await sim.close()
    logger.info('stopped')
    logger.flush(() => process.exit(0))
  })
}

main().catch(err => {
  logger.fatal({ err }, err instanceof Error ? err.message : 'start-up failed')
  logger.flush(() => process.exit(1))
})
