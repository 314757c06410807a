/**
 * A probe of the forward path (issue 25), not a benchmark with a target: a cluster of two gateway
 * instances on Redis (REDIS_URL, a namespace of this run, deleted afterwards) and the simulator
 * server, 4 devices; sends of a text for the devices instance A holds, sent to A (direct) or to B,
 * which forwards each to A (forwarded). After a warm-up of each, BENCH_ROUNDS rounds (5) of one run
 * of BENCH_SECONDS (4) on each, back to back (order swapped every round); each run's CPU per answered
 * request summed over both instances, idle CPU taken out (bench/lib/cpu-per-request.ts), so direct
 * and forwarded are measured on the same two processes. With BENCH_BEFORE_ROOT=<copy of the package,
 * built> a second cluster of that build runs alongside and every round measures both builds, for a
 * before/after comparison in the same minutes. Under BENCH_PROFILE=<dir> with `forwarded` as the
 * argument only forwards are sent: B's profile is then the forwarding side, A's the holder's (`direct`: only
 * direct sends, A's profile the direct side's). Each
 * round's line gives each instance's share (A, B) and how often its event loop went to sleep per request
 * (each sleep a wake-up paid: bench/lib/process.ts eventLoopSleeps). With BENCH_RATE=<requests a second> every run sends
 * at that rate (open loop) instead of as fast as answered: CPU per request depends on the rate (at a
 * lower rate fewer requests share each wake-up and socket write), and a forward halves the closed-loop
 * rate, so a fixed rate both sides keep compares like with like. autocannon spends such a rate as a
 * burst at the start of every second; with BENCH_PACED=<requests a second> the requests leave evenly
 * spaced instead (bench/lib/paced-load.ts), as from many independent clients.
 *
 *     node --conditions=source --import tsx bench/forward-probe.ts [forwarded | direct]
 */
import { linkDevices, startCluster, type BenchCluster } from './lib/cluster.ts'
import { measuredCpu, type Measured } from './lib/cpu-per-request.ts'
import { load } from './lib/load.ts'
import { pacedLoad } from './lib/paced-load.ts'
import { startServer } from './lib/process.ts'
import { redisUrl } from './lib/redis.ts'
import { median, note } from './lib/report.ts'
import { clearStore } from './lib/stores.ts'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4)
const RATE = process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : undefined
const PACED = process.env.BENCH_PACED ? Number(process.env.BENCH_PACED) : undefined
const only = process.argv[2] as 'forwarded' | 'direct' | undefined
const path = '/api/create-message'

const sim = await startServer('simulator.mjs')
const clusters: BenchCluster[] = []
try {
  const builds: Record<string, string | undefined> = process.env.BENCH_BEFORE_ROOT
    ? { before: process.env.BENCH_BEFORE_ROOT, after: undefined }
    : { this: undefined }
  const sides: { name: string; run: (seconds: number) => Promise<Measured> }[] = []
  for (const [build, root] of Object.entries(builds)) {
    const cluster = await startCluster({ storeUrl: redisUrl, count: 2, sim, ...(root ? { root } : {}) })
    clusters.push(cluster)
    const fixture = await linkDevices(cluster, 4, build === 'before' ? '55116' : '55115')
    const [a, b] = cluster.instances as [typeof sim, typeof sim]
    const bodies = fixture.devices
      .filter(d => d.holder === 0)
      .map(d => ({ appkey: d.appkey, authkey: fixture.authkey, to: '5511988887777', message: 'Olá! Seu pedido 1234 saiu para entrega.' }))
    if (bodies.length === 0) throw new Error('instance A holds no device')
    note(`${build}: A (holder) pid ${a.child.pid}, B pid ${b.child.pid}`)
    const to = (url: string) => (seconds: number) =>
      PACED
        ? pacedLoad({ url, path, body: undefined, bodies, connections: 8, seconds, rate: PACED })
        : load({ url, path, body: undefined, bodies, connections: 8, seconds, warmupSeconds: 0, ...(RATE ? { rate: RATE } : {}) })
    if (only !== 'forwarded') sides.push({ name: `${build} direct`, run: measuredCpu(sim, [a, b], to(a.url)) })
    if (only !== 'direct') sides.push({ name: `${build} forwarded`, run: measuredCpu(sim, [a, b], to(b.url)) })
  }
  for (const side of sides) await side.run(3)
  const results = new Map(sides.map(side => [side.name, [] as number[]]))
  const perInstance = new Map(sides.map(side => [side.name, [] as number[][]]))
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 ? [...sides].reverse() : sides
    const line: string[] = []
    for (const side of order) {
      const result = await side.run(SECONDS)
      results.get(side.name)!.push(result.cpuGateways)
      perInstance.get(side.name)!.push(result.cpuEach)
      line.push(
        `${side.name} ${result.cpuGateways.toFixed(0)} µs (A ${result.cpuEach[0]!.toFixed(0)}, B ${result.cpuEach[1]!.toFixed(0)}; sleeps a request A ${result.sleepsEach[0]!.toFixed(2)}, B ${result.sleepsEach[1]!.toFixed(2)}; ${result.rps.toFixed(0)} req/s)`,
      )
    }
    note(`round ${round + 1}: ${line.join('; ')}`)
  }
  for (const [name, values] of results)
    note(
      `${name}: median ${median(values).toFixed(0)} µs per request over both instances (rounds ${values.map(v => v.toFixed(0)).join(', ')}); A ${median(perInstance.get(name)!.map(each => each[0]!)).toFixed(0)}, B ${median(perInstance.get(name)!.map(each => each[1]!)).toFixed(0)}`,
    )
  for (const build of Object.keys(builds)) {
    const direct = results.get(`${build} direct`)
    const forwarded = results.get(`${build} forwarded`)
    if (direct && forwarded)
      note(
        `${build}: forwarded / direct per round ${forwarded.map((f, i) => (f / direct[i]!).toFixed(2)).join(', ')}; median ${median(forwarded.map((f, i) => f / direct[i]!)).toFixed(2)}`,
      )
  }
} finally {
  for (const cluster of clusters) {
    await cluster.stop()
    await clearStore(redisUrl, cluster.namespace).catch(error => note(`could not delete the Redis namespace: ${error}`))
  }
  await sim.stop()
}
