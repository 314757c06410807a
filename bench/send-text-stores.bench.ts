/**
 * send-text-rps-sqlite and send-text-rps-redis: the load of send-text-rps (authenticated sends of a
 * text, op 8, 10 connections, 3 s warm-up, 10 s measured) through the gateway on the memory transport
 * with a SQLite file store, then with Redis (REDIS_URL, default redis://127.0.0.1:6379, under a
 * namespace of this run, deleted afterwards), against the bare Koa app of the same run. Report only.
 */
import { load, type LoadResult } from './lib/load.ts'
import { startServer } from './lib/process.ts'
import { benchNamespace, clearNamespace, redisUrl } from './lib/redis.ts'
import { note, report } from './lib/report.ts'
import { accountWithDevices, sendTextBody } from './lib/setup.ts'
import { tempDir } from './lib/temp.ts'

const path = '/api/create-message'

/** The gateway's send-text load on the store of `env` (its own process, stopped afterwards). */
async function gatewayRps(env: Record<string, string>): Promise<LoadResult> {
  const gateway = await startServer('gateway.mjs', env)
  try {
    const fixture = await accountWithDevices(gateway, 1)
    return await load({ url: gateway.url, path, body: sendTextBody(fixture) })
  } finally {
    await gateway.stop()
  }
}

const dir = await tempDir('stores')
const namespace = benchNamespace('stores')
try {
  const bare = await startServer('bare-koa.mjs')
  let baseline: LoadResult
  try {
    // The body's shape is all bare Koa looks at: any appkey and authkey will do.
    baseline = await load({ url: bare.url, path, body: sendTextBody({ authkey: 'x'.repeat(32), devices: [{ appkey: 'bench-0', phone: '' }] }) })
  } finally {
    await bare.stop()
  }
  note(`bare Koa ${baseline.rps.toFixed(0)} req/s (p99 ${baseline.p99} ms)`)

  const sqlite = await gatewayRps({ BENCH_STORE: `sqlite://${dir.file('gateway.sqlite')}` })
  note(`SQLite: ${sqlite.rps.toFixed(0)} req/s (p50 ${sqlite.p50} ms, p99 ${sqlite.p99} ms)`)
  report({ name: 'send-text-rps-sqlite', value: sqlite.rps, unit: 'req/s', baseline: baseline.rps })

  const redis = await gatewayRps({ BENCH_STORE: redisUrl, BENCH_NAMESPACE: namespace })
  note(`Redis: ${redis.rps.toFixed(0)} req/s (p50 ${redis.p50} ms, p99 ${redis.p99} ms)`)
  report({ name: 'send-text-rps-redis', value: redis.rps, unit: 'req/s', baseline: baseline.rps })
} finally {
  await dir.remove()
  await clearNamespace(redisUrl, namespace).catch(error => note(`could not delete the Redis namespace ${namespace}: ${error}`))
}
