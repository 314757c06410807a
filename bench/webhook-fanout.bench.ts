/**
 * webhook-fanout: 10,000 texts from a simulated phone to 4 devices (memory transport, memory store),
 * each delivered by the gateway's durable outbox and default sender to a local receiver (node:http
 * in this process, 204). events/s = 10,000 / (inject call to the 10,000th distinct `webhook-id`).
 * Baseline: a plain loop of got POSTs of one recorded delivery (same body and headers) to the same
 * receiver, 8 in flight (the sender's per-host limit), in its own process.
 *
 * Both sides warm up with WARMUP deliveries, then run ROUNDS rounds of 10,000 on each side back to
 * back (the baseline first in odd rounds, the gateway first in even ones), so that a round's two runs
 * see about the same machine (this shared VM's speed drifts by half over tens of seconds). The figure is the round whose ratio is the
 * median of the rounds' ratios: its two rates are the value and the baseline. Targets: ratio >= 0.7;
 * webhook-fanout-lost (events of all rounds not delivered within 120 s each) <= 0.
 */
import { runScript, startServer, type ServerProcess } from './lib/process.ts'
import { startReceiver, type Delivery, type WebhookReceiver } from './lib/receiver.ts'
import { median, medianBy, note, pairedRounds, report } from './lib/report.ts'
import { accountWithDevices, type Fixture } from './lib/setup.ts'

const EVENTS = 10_000
const WARMUP = 2_000
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const DEVICES = 4
const WAIT_MS = 120_000
const SENDER = '5511977776666'

const receiver = await startReceiver()
const gateway = await startServer('gateway.mjs')
try {
  const fixture = await accountWithDevices(gateway, DEVICES, { webhook: receiver.url })
  const warm = await inject(gateway, fixture, receiver, WARMUP)
  if (warm.delivered < WARMUP) throw new Error(`warm-up: ${warm.delivered} of ${WARMUP} events delivered in ${WAIT_MS / 1000} s`)
  const recorded = replayable(receiver.first!)

  let lost = 0
  const ours = async () => {
    const run = await inject(gateway, fixture, receiver, EVENTS)
    lost += EVENTS - run.delivered
    note(
      `gateway: ${run.delivered} of ${EVENTS} events in ${run.seconds.toFixed(2)} s (${run.connections} connections; ${run.cpuPerEvent.toFixed(0)} µs CPU per event)`,
    )
    return run.delivered / run.seconds
  }
  const baseline = async () => {
    receiver.reset()
    const out = await runScript('got-loop.mjs', {
      GOT_LOOP_URL: receiver.url,
      GOT_LOOP_PAYLOAD: JSON.stringify(recorded),
      GOT_LOOP_COUNT: String(EVENTS),
      GOT_LOOP_WARMUP: String(WARMUP),
    })
    const [, , ms, failed, cpuMs] = /DONE (\d+) ([\d.]+) (\d+) (\d+)/.exec(out) ?? []
    if (ms === undefined || failed !== '0') throw new Error(`got-loop: ${out.trim()}`)
    note(`got loop: ${EVENTS} POSTs in ${(Number(ms) / 1000).toFixed(2)} s (${((Number(cpuMs) * 1000) / EVENTS).toFixed(0)} µs CPU per POST)`)
    return EVENTS / (Number(ms) / 1000)
  }
  const rounds = await pairedRounds(ROUNDS, baseline, ours, (round, pair) => note(`round ${round}: ratio ${(pair.ours / pair.baseline).toFixed(2)}`))

  const middle = medianBy(rounds, r => r.ours / r.baseline)
  note(`medians of each side apart: gateway ${median(rounds.map(r => r.ours)).toFixed(0)}, got loop ${median(rounds.map(r => r.baseline)).toFixed(0)} events/s`)
  report({ name: 'webhook-fanout', value: middle.ours, unit: 'events/s', baseline: middle.baseline, target: { of: 'ratio', op: '>=', limit: 0.7 } })
  report({ name: 'webhook-fanout-lost', value: lost, unit: 'events', baseline: 0, target: { of: 'value', op: '<=', limit: 0 } })
} finally {
  await gateway.stop()
  await receiver.close()
}

/** Have `count` texts sent to the devices; wait until the receiver has them all (or WAIT_MS passed). */
async function inject(server: ServerProcess, fixture: Fixture, receiver: WebhookReceiver, count: number) {
  receiver.reset()
  const before = await server.get('/_bench/cpu')
  const started = performance.now()
  await server.post('/_bench/inject', { from: SENDER, to: fixture.devices.map(device => device.phone), count })
  const done = await receiver.reached('unique', count, WAIT_MS)
  const seconds = ((done ?? receiver.lastAt) - started) / 1000
  const after = await server.get('/_bench/cpu')
  const cpuPerEvent = (after.user + after.system - before.user - before.system) / count
  return { delivered: receiver.unique, seconds, connections: receiver.connections, cpuPerEvent }
}

/** The headers a sender sets (not those of the connection), with the body. */
function replayable({ headers, body }: Delivery): { headers: Record<string, string>; body: string } {
  const kept = Object.entries(headers).filter(([name]) => name === 'content-type' || name === 'user-agent' || name.startsWith('webhook-'))
  return { headers: Object.fromEntries(kept) as Record<string, string>, body }
}
