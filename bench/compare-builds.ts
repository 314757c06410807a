/**
 * Two builds of the gateway against each other on one path, in paired rounds (the way bench/README.md
 * measures): `node --import tsx bench/compare-builds.ts <send-text|webhook-fanout> <rootA> <rootB>`.
 * A root is a copy of the package with its own `dist/` and `bench/servers/` (and `package.json`,
 * `node_modules`), e.g. one built with `npx tsc -p tsconfig.build.json --outDir <root>/dist` before a
 * change and one after. Both servers run at once; after a warm-up of each, BENCH_ROUNDS rounds (7) of
 * one run on each back to back, A first in odd rounds. Prints every round's rate ratio B/A and the
 * ratio of the CPU each server used per request (or event) B/A, from process.cpuUsage(): on a loaded
 * machine the CPU per request moves far less than the rate. Then the medians and ranges of both
 * ratios. BENCH_PAIRS (default 1) runs that many fresh process pairs, B started first in every other one,
 * and summarises each and all their rounds together. Not part of `npm run bench` (it is not a `.bench.ts`).
 */
import { load } from './lib/load.ts'
import { startServer, type ServerProcess } from './lib/process.ts'
import { startReceiver, type WebhookReceiver } from './lib/receiver.ts'
import { median, note, pairedRounds, type Paired } from './lib/report.ts'
import { accountWithDevices, sendTextBody, type Fixture } from './lib/setup.ts'

const [path, rootA, rootB] = process.argv.slice(2)
if (!rootA || !rootB || (path !== 'send-text' && path !== 'webhook-fanout')) {
  console.error('usage: bench/compare-builds.ts <send-text|webhook-fanout> <rootA> <rootB>')
  process.exit(2)
}
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7)
/** Fresh process pairs (BENCH_PAIRS, default 1), B started first in every other one: a process's speed can sit 10 % off another's of the same build for its whole life, so one pair's rounds share that error. */
const PAIRS = Number(process.env.BENCH_PAIRS ?? 1)
/** Requests (or events) each server answered, warm-up included (BENCH_PROFILE: its profile's whole life). */
const answered = new Map<ServerProcess, number>()
const rounds: Paired<Run, Run>[] = []
const summary = (name: string, ratios: number[]) =>
  `${name} B/A median ${median(ratios).toFixed(3)} (range ${Math.min(...ratios).toFixed(3)} to ${Math.max(...ratios).toFixed(3)})`
const ratios = (of: Paired<Run, Run>[]) =>
  `${summary(
    'rate',
    of.map(r => r.ours.rate / r.baseline.rate),
  )}; ${summary(
    'CPU per request',
    of.map(r => r.ours.cpuUs / r.baseline.cpuUs),
  )}`
for (let pair = 1; pair <= PAIRS; pair++) {
  const [first, second] = pair % 2 ? [rootA, rootB] : [rootB, rootA]
  const started = [await startServer('gateway.mjs', {}, { root: first }), await startServer('gateway.mjs', {}, { root: second })]
  const [a, b] = pair % 2 ? started : [started[1]!, started[0]!]
  const receiver = path === 'webhook-fanout' ? await startReceiver() : undefined
  try {
    const [runA, runB] = await Promise.all([a, b].map(server => runner(server, receiver)))
    await runA!(true)
    await runB!(true)
    const these = await pairedRounds(
      ROUNDS,
      () => runA!(false),
      () => runB!(false),
      (round, { baseline: a, ours: b }) =>
        note(
          `pair ${pair} round ${round}: A ${a.rate.toFixed(0)}/s ${a.cpuUs.toFixed(0)} µs CPU each, B ${b.rate.toFixed(0)}/s ${b.cpuUs.toFixed(0)} µs; rate B/A ${(b.rate / a.rate).toFixed(3)}, CPU B/A ${(b.cpuUs / a.cpuUs).toFixed(3)}`,
        ),
    )
    rounds.push(...these)
    if (PAIRS > 1) note(`pair ${pair} (${pair % 2 ? 'A' : 'B'} started first): ${ratios(these)}`)
    if (process.env.BENCH_PROFILE)
      note(`answered (for profile-top --requests): ${[a, b].map((server, i) => `${'AB'[i]} pid ${server.child.pid} ${answered.get(server)}`).join(', ')}`)
  } finally {
    await Promise.all([a.stop(), b.stop(), receiver?.close()])
  }
}
note(`${path}: ${ratios(rounds)}`)
note(
  `medians apart: A ${median(rounds.map(r => r.baseline.rate)).toFixed(0)}/s ${median(rounds.map(r => r.baseline.cpuUs)).toFixed(0)} µs, B ${median(rounds.map(r => r.ours.rate)).toFixed(0)}/s ${median(rounds.map(r => r.ours.cpuUs)).toFixed(0)} µs`,
)

/** One run: requests (or events) per second, and the server's CPU time per request in µs. */
interface Run {
  rate: number
  cpuUs: number
}

/** A function that runs one measured (or warm-up) run on `server`. */
async function runner(server: ServerProcess, receiver: WebhookReceiver | undefined): Promise<(warmup: boolean) => Promise<Run>> {
  if (!receiver) {
    const body = sendTextBody(await accountWithDevices(server, 1))
    return warmup =>
      withCpu(server, async () => {
        const result = await load({ url: server.url, path: '/api/create-message', body, seconds: warmup ? 5 : 3, warmupSeconds: 0 })
        return { rate: result.rps, count: result.total }
      })
  }
  const fixture = await accountWithDevices(server, 4, { webhook: receiver.url })
  return warmup => withCpu(server, () => inject(server, fixture, receiver, warmup ? 2_000 : 10_000))
}

/** `work`'s rate, with the CPU the server used per unit of work meanwhile. */
async function withCpu(server: ServerProcess, work: () => Promise<{ rate: number; count: number }>): Promise<Run> {
  const before = await server.get('/_bench/cpu')
  const { rate, count } = await work()
  answered.set(server, (answered.get(server) ?? 0) + count)
  const after = await server.get('/_bench/cpu')
  return { rate, cpuUs: (after.user + after.system - before.user - before.system) / count }
}

/** Have `count` texts sent to the devices; events delivered per second (throws when some never arrive). */
async function inject(server: ServerProcess, fixture: Fixture, receiver: WebhookReceiver, count: number): Promise<{ rate: number; count: number }> {
  receiver.reset()
  const started = performance.now()
  await server.post('/_bench/inject', { from: '5511977776666', to: fixture.devices.map(device => device.phone), count })
  const done = await receiver.reached('unique', count, 120_000)
  if (done === undefined) throw new Error(`${receiver.unique} of ${count} events delivered`)
  return { rate: count / ((done - started) / 1000), count }
}
