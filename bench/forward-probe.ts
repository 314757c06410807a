/**
 * A probe of the forward path (issue 25), not a benchmark with a target: two gateway instances in
 * cluster mode on Redis (REDIS_URL, a namespace of this run, deleted afterwards) and the simulator
 * server, 4 devices, sends of a text for the devices instance A holds, for SECONDS s (BENCH_SECONDS,
 * default 10) after a 3 s warm-up. `direct` sends them to A; `forwarded` to B, which forwards every
 * one to A. Prints the CPU each instance used per answered request (from /proc) and their sum.
 * Run under BENCH_PROFILE=<dir> to leave a `--cpu-prof` profile of each instance there (read them
 * with `node bench/profile-top.mjs <file>`): with `forwarded` alone, B's profile is the forwarding
 * side and A's the holder receiving forwards. Build first (`npm run build`).
 *
 *     node --conditions=source --import tsx bench/forward-probe.ts forwarded|direct
 */
import { linkDevices, startCluster, type BenchCluster } from './lib/cluster.ts'
import { load } from './lib/load.ts'
import { cpuMicros, startServer } from './lib/process.ts'
import { redisUrl } from './lib/redis.ts'
import { note } from './lib/report.ts'
import { clearStore } from './lib/stores.ts'

const side = process.argv[2] === 'direct' ? 'direct' : 'forwarded'
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)

const sim = await startServer('simulator.mjs')
let cluster: BenchCluster | undefined
try {
  cluster = await startCluster({ storeUrl: redisUrl, count: 2, sim })
  const fixture = await linkDevices(cluster, 4)
  const [a, b] = cluster.instances as [typeof sim, typeof sim]
  const bodies = fixture.devices
    .filter(d => d.holder === 0)
    .map(d => ({ appkey: d.appkey, authkey: fixture.authkey, to: '5511988887777', message: 'Olá! Seu pedido 1234 saiu para entrega.' }))
  if (bodies.length === 0) throw new Error('instance A holds no device')
  const url = side === 'direct' ? a.url : b.url
  await load({ url, path: '/api/create-message', body: undefined, bodies, connections: 10, seconds: 3, warmupSeconds: 0 })
  const before = [cpuMicros(a.child.pid), cpuMicros(b.child.pid)]
  const result = await load({ url, path: '/api/create-message', body: undefined, bodies, connections: 10, seconds: SECONDS, warmupSeconds: 0 })
  const used = [cpuMicros(a.child.pid) - before[0]!, cpuMicros(b.child.pid) - before[1]!].map(us => us / result.total)
  note(
    `${side}: ${result.rps.toFixed(0)} req/s; CPU per request: A (holder) ${used[0]!.toFixed(0)} µs, B ${used[1]!.toFixed(0)} µs, both ${(used[0]! + used[1]!).toFixed(0)} µs`,
  )
} finally {
  if (cluster) {
    await cluster.stop()
    await clearStore(redisUrl, cluster.namespace).catch(error => note(`could not delete the Redis namespace: ${error}`))
  }
  await sim.stop()
}
