/**
 * send-text-rps: authenticated sends of a text (op 8) through the gateway (memory transport, memory
 * store) against a bare Koa app parsing the same JSON body, each server in its own process, the same
 * autocannon load (10 connections): 3 s of warm-up each, then five alternating 5 s runs of each
 * (BENCH_ROUNDS); the figures are the medians (a neighbour on this shared VM can halve one run of
 * either server, and five runs keep one such run out of the median). send-text-p99: the gateway's p99 at
 * half the bare Koa rate, against bare Koa's own p99 at that rate; it FAILs when the gateway could
 * not keep that rate (autocannon then sends less, and its latencies no longer mean anything).
 */
import { load } from './lib/load.ts'
import { startServer } from './lib/process.ts'
import { median, note, report } from './lib/report.ts'
import { accountWithDevices, sendTextBody } from './lib/setup.ts'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)

const bare = await startServer('bare-koa.mjs')
const gateway = await startServer('gateway.mjs')
try {
  const fixture = await accountWithDevices(gateway, 1)
  const body = sendTextBody(fixture)
  // Warm both up, then alternate: one run on this shared machine swings by 20 %, medians much less.
  await load({ url: bare.url, path: '/api/create-message', body, seconds: 3, warmupSeconds: 0 })
  await load({ url: gateway.url, path: '/api/create-message', body, seconds: 3, warmupSeconds: 0 })
  const bareRuns: number[] = []
  const ourRuns: number[] = []
  for (let round = 1; round <= ROUNDS; round++) {
    const baseline = await load({ url: bare.url, path: '/api/create-message', body, seconds: 5, warmupSeconds: 0 })
    const ours = await load({ url: gateway.url, path: '/api/create-message', body, seconds: 5, warmupSeconds: 0 })
    bareRuns.push(baseline.rps)
    ourRuns.push(ours.rps)
    note(`round ${round}: bare Koa ${baseline.rps.toFixed(0)} req/s (p99 ${baseline.p99} ms); gateway ${ours.rps.toFixed(0)} req/s (p50 ${ours.p50} ms, p99 ${ours.p99} ms)`)
  }
  const bareRps = median(bareRuns)
  report({ name: 'send-text-rps', value: median(ourRuns), unit: 'req/s', baseline: bareRps, target: { of: 'ratio', op: '>=', limit: 0.6 } })

  const rate = Math.round(bareRps / 2)
  const bareAtRate = await load({ url: bare.url, path: '/api/create-message', body, rate })
  const oursAtRate = await load({ url: gateway.url, path: '/api/create-message', body, rate })
  note(`at ${rate} req/s: bare Koa p50 ${bareAtRate.p50} ms p99 ${bareAtRate.p99} ms; gateway p50 ${oursAtRate.p50} ms p99 ${oursAtRate.p99} ms (${oursAtRate.rps.toFixed(0)} req/s done)`)
  // autocannon holds requests back when the server falls behind (closed loop per connection), so a
  // p99 taken below the asked rate hides the queueing: it only counts when the rate was kept.
  const kept = oursAtRate.rps >= 0.95 * rate
  report({
    name: 'send-text-p99',
    value: oursAtRate.p99,
    unit: 'ms',
    baseline: bareAtRate.p99,
    target: { of: 'value', op: '<=', limit: 10 },
    ...(kept ? {} : { invalid: `the gateway answered ${oursAtRate.rps.toFixed(0)} req/s, below the ${rate} req/s asked (half the bare Koa rate)` }),
  })
} finally {
  await Promise.all([bare.stop(), gateway.stop()])
}
