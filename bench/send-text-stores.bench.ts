/**
 * The load of send-text-rps (authenticated sends of a text, op 8, 10 connections, 3 s warm-up, 10 s
 * measured) through the gateway on the memory transport with each store, against the bare Koa app
 * of the same run:
 * - send-text-rps-sqlite: a SQLite file. Report only.
 * - send-text-rps-redis: Redis (REDIS_URL, default redis://127.0.0.1:6379), under a namespace of this
 *   run, deleted afterwards. Target: at least half the bare Koa rate (issue 17: the atomic steps must
 *   not take Redis below 0.5).
 * - send-text-rps-redis-vs-memory: the same Redis run against the memory store's (the cost of a
 *   shared store: reads, the atomic steps and their round trips). Report only.
 * - send-text-rps-postgres-vs-memory: PostgreSQL (POSTGRES_URL, default
 *   postgres://postgres@127.0.0.1:5432/test) under a namespace deleted afterwards, against the memory
 *   store. Report only; skipped with a note when the server cannot be reached.
 */
import { load, type LoadResult } from './lib/load.ts'
import { startServer } from './lib/process.ts'
import { benchNamespace, clearNamespace, redisUrl } from './lib/redis.ts'
import { note, report } from './lib/report.ts'
import { accountWithDevices, sendTextBody } from './lib/setup.ts'
import { clearStore, postgresUrl } from './lib/stores.ts'
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

/** Whether the PostgreSQL server answers (a store opened and closed). */
async function postgresReachable(): Promise<boolean> {
  try {
    await clearStore(postgresUrl, benchNamespace('probe'))
    return true
  } catch (error) {
    note(`PostgreSQL at ${postgresUrl.replace(/\/\/[^@/]*@/, '//***@')} not reachable (${error}): send-text-rps-postgres-vs-memory skipped`)
    return false
  }
}

const dir = await tempDir('stores')
const namespace = benchNamespace('stores')
const pgNamespace = benchNamespace('stores-pg')
let usedPostgres = false
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

  const memory = await gatewayRps({ BENCH_STORE: 'memory://' })
  note(`memory: ${memory.rps.toFixed(0)} req/s (p50 ${memory.p50} ms, p99 ${memory.p99} ms)`)

  const sqlite = await gatewayRps({ BENCH_STORE: `sqlite://${dir.file('gateway.sqlite')}` })
  note(`SQLite: ${sqlite.rps.toFixed(0)} req/s (p50 ${sqlite.p50} ms, p99 ${sqlite.p99} ms)`)
  report({ name: 'send-text-rps-sqlite', value: sqlite.rps, unit: 'req/s', baseline: baseline.rps })

  const redis = await gatewayRps({ BENCH_STORE: redisUrl, BENCH_NAMESPACE: namespace })
  note(`Redis: ${redis.rps.toFixed(0)} req/s (p50 ${redis.p50} ms, p99 ${redis.p99} ms)`)
  report({ name: 'send-text-rps-redis', value: redis.rps, unit: 'req/s', baseline: baseline.rps, target: { of: 'ratio', op: '>=', limit: 0.5 } })
  report({ name: 'send-text-rps-redis-vs-memory', value: redis.rps, unit: 'req/s', baseline: memory.rps })

  if (await postgresReachable()) {
    usedPostgres = true
    const postgres = await gatewayRps({ BENCH_STORE: postgresUrl, BENCH_NAMESPACE: pgNamespace })
    note(`PostgreSQL: ${postgres.rps.toFixed(0)} req/s (p50 ${postgres.p50} ms, p99 ${postgres.p99} ms)`)
    report({ name: 'send-text-rps-postgres-vs-memory', value: postgres.rps, unit: 'req/s', baseline: memory.rps })
  }
} finally {
  await dir.remove()
  await clearNamespace(redisUrl, namespace).catch(error => note(`could not delete the Redis namespace ${namespace}: ${error}`))
  if (usedPostgres) await clearStore(postgresUrl, pgNamespace).catch(error => note(`could not delete the PostgreSQL namespace ${pgNamespace}: ${error}`))
}
