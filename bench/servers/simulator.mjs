/**
 * The simulated network as a server of its own (what `npm run sim` runs), for the cluster benchmarks:
 * gateway processes join it with BENCH_SIM_URL. Prints `READY <port>` once listening. Plain
 * JavaScript on the compiled package, run by `node` alone, like gateway.mjs.
 */
import { simulatorServer } from 'zapgate/adapters/transport-memory'

const sim = await simulatorServer({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1', networkOptions: { logLimit: 2_000 } })
process.stdout.write(`READY ${sim.port}\n`)
process.once('SIGTERM', async () => {
  await sim.close()
  process.exit(0)
})
