/**
 * The gateway as the benchmarks run it: the simulated network (memory transport) with its `/_sim`
 * routes, the store of BENCH_STORE (default memory://; its keys under the namespace BENCH_NAMESPACE,
 * default the gateway's own, "zapgate"), rate limits off (a benchmark is one client
 * hammering one account), no logger. Prints `READY <port>` once listening.
 *
 * Three routes for the driver only: `POST /_bench/inject {from, to[], count}` has simulated phones send
 * `count` texts to the devices' phones (round robin) straight on the network, as WhatsApp would
 * deliver them, and answers once all are handed to the transport; `GET /_bench/memory` answers
 * process.memoryUsage() right after a full garbage collection; `GET /_bench/cpu` process.cpuUsage().
 *
 * Cluster mode (the scale-out benchmarks): BENCH_SIM_URL joins the simulator server there
 * (bench/servers/simulator.mjs) instead of a network of this process (no `/_sim` routes here then, and
 * no `/_bench/inject`); BENCH_CLUSTER_SECRET turns cluster mode on, with BENCH_ADVERTISE_URL (default
 * http://127.0.0.1:PORT: give PORT) where the other instances reach this one; BENCH_LEASE_TTL_MS the
 * instance time-to-live (heartbeat a fifth of it); BENCH_MIN_INTERVAL_MS the pacing of each device;
 * BENCH_SCHEDULE_POLL_MS how often the scheduler re-reads the store.
 *
 * Plain JavaScript on the compiled package (`dist/`), run by `node` alone: what is measured is the
 * gateway as an app using the library runs it, without a TypeScript loader in the process.
 */
import { writeFileSync } from 'node:fs'
import Koa from 'koa'
import bodyParser from 'koa-bodyparser'
import Router from '@koa/router'
import { createGateway } from 'zapgate'
import { storageFromUrl } from 'zapgate/adapters/storage-keyv'
import { MemoryNetwork, memoryTransport, simulatorRoutes } from 'zapgate/adapters/transport-memory'

const env = process.env
const network = env.BENCH_SIM_URL ? undefined : new MemoryNetwork({ logLimit: 2_000 })
const storage = await storageFromUrl(env.BENCH_STORE ?? 'memory://', env.BENCH_NAMESPACE ? { namespace: env.BENCH_NAMESPACE } : {})
const ttlMs = env.BENCH_LEASE_TTL_MS ? Number(env.BENCH_LEASE_TTL_MS) : undefined
const gateway = await createGateway({
  storage,
  transport: memoryTransport(network ? { network } : { simUrl: env.BENCH_SIM_URL }),
  rateLimit: false,
  allowPrivateUrls: true,
  ...(env.BENCH_CLUSTER_SECRET
    ? { cluster: { secret: env.BENCH_CLUSTER_SECRET, advertiseUrl: env.BENCH_ADVERTISE_URL ?? `http://127.0.0.1:${env.PORT}` } }
    : {}),
  ...(ttlMs ? { instances: { ttlMs, heartbeatMs: Math.max(200, Math.round(ttlMs / 5)) } } : {}),
  ...(env.BENCH_MIN_INTERVAL_MS ? { minIntervalMs: Number(env.BENCH_MIN_INTERVAL_MS) } : {}),
  ...(env.BENCH_SCHEDULE_POLL_MS ? { schedulePollMs: Number(env.BENCH_SCHEDULE_POLL_MS) } : {}),
})

// BENCH_ROUTES=<dir>: the requests answered by route, written to <dir>/routes-<pid>.json at the end (how many forwards went in batches).
const routes = {}
if (env.BENCH_ROUTES) gateway.events.on('request', ({ route }) => (routes[route] = (routes[route] ?? 0) + 1))

const app = new Koa()
// The gateway's routes first: the simulator's and the driver's routes are the harness, and a request
// for the gateway should not pay for matching them.
app.use(gateway.routes())
if (network) app.use(simulatorRoutes(network, { findDevices: gateway.findDevices }).routes())
const bench = new Router({ prefix: '/_bench' })
bench.post('/inject', bodyParser(), async ctx => {
  if (!network) ctx.throw(404, 'no network in this process (BENCH_SIM_URL)')
  const { from, to, count } = ctx.request.body
  let next = 0
  const worker = async () => {
    while (next < count) {
      const n = next++
      await network.sendFromPhone(from, to[n % to.length], { type: 'text', text: `mensagem ${n}` })
    }
  }
  await Promise.all(Array.from({ length: 16 }, worker))
  ctx.body = { injected: count }
})
bench.get('/cpu', ctx => {
  ctx.body = process.cpuUsage()
})
bench.get('/memory', ctx => {
  globalThis.gc?.()
  ctx.body = process.memoryUsage()
})
app.use(bench.routes())

const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address()
  process.stdout.write(`READY ${port}\n`)
})
process.once('SIGTERM', async () => {
  server.close()
  server.closeAllConnections()
  await gateway.close()
  await storage.close?.()
  if (env.BENCH_ROUTES) writeFileSync(`${env.BENCH_ROUTES}/routes-${process.pid}.json`, JSON.stringify(routes))
  process.exit(0)
})
