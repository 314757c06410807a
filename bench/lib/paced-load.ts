import { Pool } from 'undici'
import type { LoadOptions, LoadResult } from './load.ts'

/**
 * Open-loop load at an even pace: request i leaves at start + i / rate, whether or not earlier
 * ones were answered, over kept-alive connections (undici's Pool). autocannon's rate is a budget per
 * connection per second, spent as fast as answers come (a burst at the start of every second, then
 * nothing), so a server fast enough to take the burst sleeps once a second; requests spread evenly,
 * as independent clients send them, each wake the server (and every process a forward passes
 * through) on their own. Both are real loads; this one is what a gateway sees from many clients at
 * a moderate rate. Throws when any answer is not 2xx, as `load` does.
 */
export async function pacedLoad(options: LoadOptions & { rate: number }): Promise<LoadResult> {
  const connections = options.connections ?? 10
  const seconds = options.seconds ?? 10
  const urls = Array.isArray(options.url) ? options.url : [options.url]
  const pools = urls.map(url => new Pool(url, { connections, pipelining: 1 }))
  const bodies = (options.bodies ?? [options.body]).map(body => JSON.stringify(body))
  const count = Math.round(options.rate * seconds)
  const latencies: number[] = []
  let [failures, non2xx] = [0, 0]
  const send = async (i: number) => {
    const sentAt = performance.now()
    try {
      const answer = await pools[i % pools.length]!.request({
        path: options.path,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: bodies[i % bodies.length],
      })
      await answer.body.dump()
      if (answer.statusCode < 200 || answer.statusCode > 299) non2xx++
      latencies.push(performance.now() - sentAt)
    } catch {
      failures++
    }
  }
  const start = performance.now()
  const sent: Promise<void>[] = []
  try {
    for (let i = 0; i < count;) {
      const due = Math.min(count, Math.floor(((performance.now() - start) / 1000) * options.rate) + 1)
      for (; i < due; i++) sent.push(send(i))
      await new Promise(resolve => setTimeout(resolve, 1))
    }
    await Promise.all(sent)
  } finally {
    await Promise.all(pools.map(pool => pool.close()))
  }
  const duration = (performance.now() - start) / 1000
  if (failures > 0 || non2xx > 0) throw new Error(`paced load on ${options.path}: ${failures} failed, ${non2xx} non-2xx answers of ${count}`)
  latencies.sort((a, b) => a - b)
  const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!)
  return { rps: count / duration, p50: at(0.5), p99: at(0.99), total: count, errors: failures, non2xx }
}
