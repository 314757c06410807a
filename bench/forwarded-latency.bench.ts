/**
 * forwarded-latency-p50 / -p99: the latency of an authenticated send of a text (op 8) that reaches an
 * instance which does not hold the device and is forwarded to the holder, against the same send
 * answered by the holder directly. Two gateway instances in cluster mode on one Redis (REDIS_URL,
 * a namespace of this run, deleted afterwards) and one simulator server, each a process of its own;
 * 4 devices, all sends for those held by instance A, sent to A (direct) or to B (forwarded). The
 * client is an open loop at a moderate fixed rate (RATE req/s, far below either's capacity, so
 * that no queue forms): a request leaves every 1/RATE s whatever the answers, over keep-alive
 * connections, its latency timed to the microsecond. ROUNDS rounds of 4 s on each side back to back
 * (the order swapped every round) after a warm-up; the figure is the round whose extra p99 is the
 * median, its two latencies the value (forwarded) and the baseline (direct). Report only.
 */
import http from 'node:http'
import { linkDevices, startCluster, type BenchCluster } from './lib/cluster.ts'
import { startServer } from './lib/process.ts'
import { redisUrl } from './lib/redis.ts'
import { medianBy, note, pairedRounds, report } from './lib/report.ts'
import { clearStore } from './lib/stores.ts'

const RATE = Number(process.env.BENCH_RATE ?? 200)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SECONDS = 4

/** Percentiles of one open-loop run, in ms. */
interface Latencies {
  p50: number
  p99: number
  count: number
}

/** POST `bodies` in turn to `url` at RATE requests a second for `seconds`; every answer must be 200. */
async function openLoop(url: string, bodies: string[], seconds: number): Promise<Latencies> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 })
  const target = new URL(url)
  const samples: number[] = []
  const failures: string[] = []
  const one = (body: string) =>
    new Promise<void>(resolve => {
      const started = performance.now()
      const req = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        res => {
          res.resume()
          res.on('end', () => {
            if (res.statusCode === 200) samples.push(performance.now() - started)
            else failures.push(String(res.statusCode))
            resolve()
          })
        },
      )
      req.on('error', error => (failures.push(String(error)), resolve()))
      req.end(body)
    })
  const pending: Promise<void>[] = []
  const start = performance.now()
  const total = Math.round(RATE * seconds)
  for (let n = 0; n < total; n++) {
    const at = start + (n * 1000) / RATE
    const wait = at - performance.now()
    if (wait > 1) await new Promise(resolve => setTimeout(resolve, wait))
    pending.push(one(bodies[n % bodies.length]!))
  }
  await Promise.all(pending)
  agent.destroy()
  if (failures.length) throw new Error(`${url}: ${failures.length} of ${total} sends failed (${[...new Set(failures)].slice(0, 3).join(', ')})`)
  samples.sort((a, b) => a - b)
  return { p50: samples[Math.floor(samples.length * 0.5)]!, p99: samples[Math.floor(samples.length * 0.99)]!, count: samples.length }
}

const sim = await startServer('simulator.mjs')
let cluster: BenchCluster | undefined
try {
  cluster = await startCluster({ storeUrl: redisUrl, count: 2, sim })
  const fixture = await linkDevices(cluster, 4)
  const onA = fixture.devices.filter(d => d.holder === 0)
  if (onA.length === 0) throw new Error('instance A holds no device')
  const bodies = onA.map(d =>
    JSON.stringify({ appkey: d.appkey, authkey: fixture.authkey, to: '5511988887777', message: 'Olá! Seu pedido 1234 saiu para entrega.' }),
  )
  const [a, b] = cluster.instances as [typeof sim, typeof sim]
  const direct = (seconds: number) => openLoop(`${a.url}/api/create-message`, bodies, seconds)
  const forwarded = (seconds: number) => openLoop(`${b.url}/api/create-message`, bodies, seconds)
  // Warm both paths up (the first seconds of forwarding are slower: JIT, new connections between the instances).
  await direct(4)
  await forwarded(4)
  const ms = (value: number) => value.toFixed(2)
  const rounds = await pairedRounds(
    ROUNDS,
    () => direct(SECONDS),
    () => forwarded(SECONDS),
    (round, { baseline, ours }) =>
      note(
        `round ${round} at ${RATE} req/s: direct p50 ${ms(baseline.p50)} ms p99 ${ms(baseline.p99)} ms; forwarded p50 ${ms(ours.p50)} ms p99 ${ms(ours.p99)} ms; extra p50 ${ms(ours.p50 - baseline.p50)} ms, p99 ${ms(ours.p99 - baseline.p99)} ms`,
      ),
  )
  const p50 = medianBy(rounds, r => r.ours.p50 - r.baseline.p50)
  const p99 = medianBy(rounds, r => r.ours.p99 - r.baseline.p99)
  note(
    `a forwarded send takes ${ms(p50.ours.p50 - p50.baseline.p50)} ms more at the median and ${ms(p99.ours.p99 - p99.baseline.p99)} ms more at p99 (${onA.length} devices held by A, ${RATE} req/s)`,
  )
  report({ name: 'forwarded-latency-p50', value: p50.ours.p50, unit: 'ms', baseline: p50.baseline.p50 })
  report({ name: 'forwarded-latency-p99', value: p99.ours.p99, unit: 'ms', baseline: p99.baseline.p99 })
} finally {
  if (cluster) {
    await cluster.stop()
    await clearStore(redisUrl, cluster.namespace).catch(error => note(`could not delete the Redis namespace ${cluster!.namespace}: ${error}`))
  }
  await sim.stop()
}
