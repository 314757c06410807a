/**
 * The load of send-text-rps (authenticated sends of a text, op 8, 10 connections) through the gateway
 * on the memory transport with each store, every server a process of its own, all running at once:
 * bare Koa (the baseline of send-text-rps), the gateway on the memory store, on a SQLite file, on
 * Redis (REDIS_URL, default redis://127.0.0.1:6379) and on PostgreSQL (POSTGRES_URL, default
 * postgres://postgres@127.0.0.1:5432/test; left out with a note when it cannot be reached), the last
 * two under a namespace of this run, deleted afterwards. After a 3 s warm-up of each, ROUNDS rounds
 * of one 2 s run on each server back to back, in an order where the two servers of every figure run
 * one right after the other (this VM's speed drifts: the two runs of a pair see about the same
 * machine), reversed every other round; each figure is the round whose ratio is the median of the
 * rounds' ratios, its two rates the value and the baseline.
 * - send-text-rps-sqlite: SQLite against bare Koa. Report only.
 * (Redis against bare Koa, with its target, is send-text-rps-redis in send-text.bench.ts.)
 * - send-text-rps-redis-vs-memory: Redis against the memory store (the cost of a shared store:
 *   reads, the atomic steps and their round trips). Report only.
 * - send-text-rps-postgres-vs-memory: PostgreSQL against the memory store. Report only.
 */
import { load, type LoadResult } from './lib/load.ts'
import { startServer, type ServerProcess } from './lib/process.ts'
import { benchNamespace, clearNamespace, redisUrl } from './lib/redis.ts'
import { medianBy, note, report } from './lib/report.ts'
import { accountWithDevices, sendTextBody } from './lib/setup.ts'
import { clearStore, postgresUrl } from './lib/stores.ts'
import { tempDir } from './lib/temp.ts'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const path = '/api/create-message'

/** Whether the PostgreSQL server answers (a store opened and closed). */
async function postgresReachable(): Promise<boolean> {
  try {
    await clearStore(postgresUrl, benchNamespace('probe'))
    return true
  } catch (error) {
    note(`PostgreSQL at ${postgresUrl.replace(/\/\/[^@/]*@/, '//***@')} not reachable (${error}): send-text-rps-postgres-vs-memory left out`)
    return false
  }
}

type Side = 'bare' | 'memory' | 'sqlite' | 'redis' | 'postgres'
const dir = await tempDir('stores')
const namespace = benchNamespace('stores')
const pgNamespace = benchNamespace('stores-pg')
const withPostgres = await postgresReachable()
const servers = new Map<Side, { server: ServerProcess; body: unknown }>()
try {
  const bare = await startServer('bare-koa.mjs')
  // The body's shape is all bare Koa looks at: any appkey and authkey will do.
  servers.set('bare', { server: bare, body: sendTextBody({ authkey: 'x'.repeat(32), devices: [{ appkey: 'bench-0', phone: '' }] }) })
  const stores: [Side, Record<string, string>][] = [
    ['memory', { BENCH_STORE: 'memory://' }],
    ['sqlite', { BENCH_STORE: `sqlite://${dir.file('gateway.sqlite')}` }],
    ['redis', { BENCH_STORE: redisUrl, BENCH_NAMESPACE: namespace }],
    ...(withPostgres ? [['postgres', { BENCH_STORE: postgresUrl, BENCH_NAMESPACE: pgNamespace }] as [Side, Record<string, string>]] : []),
  ]
  for (const [side, env] of stores) {
    const server = await startServer('gateway.mjs', env)
    servers.set(side, { server, body: sendTextBody(await accountWithDevices(server, 1)) })
  }
  // Each compared pair runs back to back: sqlite-bare, bare-redis, redis-memory, memory-postgres;
  // the order is reversed every other round, so neither side of a pair always goes first.
  const sides = (['sqlite', 'bare', 'redis', 'memory', 'postgres'] as Side[]).filter(side => servers.has(side))
  const run = (side: Side, seconds: number) => load({ url: servers.get(side)!.server.url, path, body: servers.get(side)!.body, seconds, warmupSeconds: 0 })
  for (const side of sides) await run(side, 3)
  const rounds: Record<string, LoadResult>[] = []
  for (let r = 0; r < ROUNDS; r++) {
    const round: Record<string, LoadResult> = {}
    for (const side of r % 2 ? [...sides].reverse() : sides) round[side] = await run(side, 2)
    rounds.push(round)
    note(`round ${r + 1}: ${sides.map(side => `${side} ${round[side]!.rps.toFixed(0)} req/s (p99 ${round[side]!.p99} ms)`).join(', ')}`)
  }
  const figure = (name: string, ours: Side, baseline: Side) => {
    if (!servers.has(ours)) return
    const middle = medianBy(rounds, r => r[ours]!.rps / r[baseline]!.rps)
    report({ name, value: middle[ours]!.rps, unit: 'req/s', baseline: middle[baseline]!.rps })
  }
  figure('send-text-rps-sqlite', 'sqlite', 'bare')
  figure('send-text-rps-redis-vs-memory', 'redis', 'memory')
  figure('send-text-rps-postgres-vs-memory', 'postgres', 'memory')
} finally {
  await Promise.all([...servers.values()].map(({ server }) => server.stop()))
  await dir.remove()
  await clearNamespace(redisUrl, namespace).catch(error => note(`could not delete the Redis namespace ${namespace}: ${error}`))
  if (withPostgres) await clearStore(postgresUrl, pgNamespace).catch(error => note(`could not delete the PostgreSQL namespace ${pgNamespace}: ${error}`))
}
