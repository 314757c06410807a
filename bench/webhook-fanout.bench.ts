/**
 * webhook-fanout: 10,000 texts from a simulated phone to 4 devices (memory transport, memory store),
 * each delivered by the gateway's durable outbox and default sender to a local receiver (node:http
 * in this process, 204). events/s = 10,000 / (inject call to the 10,000th distinct `webhook-id`).
 * Baseline: a plain loop of got POSTs of one recorded delivery (same body and headers) to the same
 * receiver, 8 in flight (the sender's per-host limit), in its own process. Both warm up with 500
 * first. Targets: ratio >= 0.7; webhook-fanout-lost (10,000 - distinct deliveries within 120 s) <= 0.
 */
import { runScript, startServer } from './lib/process.ts'
import { startReceiver, type Delivery } from './lib/receiver.ts'
import { note, report } from './lib/report.ts'
import { accountWithDevices } from './lib/setup.ts'

const EVENTS = 10_000
const WARMUP = 500
const DEVICES = 4
const WAIT_MS = 120_000
const SENDER = '5511977776666'

const receiver = await startReceiver()
const gateway = await startServer('gateway.mjs')
try {
  const fixture = await accountWithDevices(gateway, DEVICES, { webhook: receiver.url })
  const inject = async (count: number) => {
    receiver.reset()
    const started = performance.now()
    await gateway.post('/_bench/inject', { from: SENDER, to: fixture.devices.map(device => device.phone), count })
    const injected = performance.now()
    const done = await receiver.reached('unique', count, WAIT_MS)
    return { started, injected, done }
  }

  const warm = await inject(WARMUP)
  if (warm.done === undefined) throw new Error(`warm-up: ${receiver.unique} of ${WARMUP} events delivered in ${WAIT_MS / 1000} s`)
  const recorded = receiver.first!
  const { started, injected, done } = await inject(EVENTS)
  const delivered = receiver.unique
  const seconds = ((done ?? receiver.lastAt) - started) / 1000
  const ours = delivered / seconds
  note(`gateway: ${delivered} of ${EVENTS} events in ${seconds.toFixed(2)} s (${receiver.requests} requests; the inject call took ${((injected - started) / 1000).toFixed(2)} s)`)
  await gateway.stop()

  receiver.reset()
  const out = await runScript('got-loop.mjs', { GOT_LOOP_URL: receiver.url, GOT_LOOP_PAYLOAD: JSON.stringify(replayable(recorded)), GOT_LOOP_COUNT: String(EVENTS), GOT_LOOP_WARMUP: String(WARMUP) })
  const [, , ms, failed] = /DONE (\d+) ([\d.]+) (\d+)/.exec(out) ?? []
  if (ms === undefined || failed !== '0') throw new Error(`got-loop: ${out.trim()}`)
  const baseline = EVENTS / (Number(ms) / 1000)
  note(`got loop: ${EVENTS} POSTs in ${(Number(ms) / 1000).toFixed(2)} s`)

  report({ name: 'webhook-fanout', value: ours, unit: 'events/s', baseline, target: { of: 'ratio', op: '>=', limit: 0.7 } })
  report({ name: 'webhook-fanout-lost', value: EVENTS - delivered, unit: 'events', baseline: Number(failed), target: { of: 'value', op: '<=', limit: 0 } })
} finally {
  await gateway.stop()
  await receiver.close()
}

/** The headers a sender sets (not those of the connection), with the body. */
function replayable({ headers, body }: Delivery): { headers: Record<string, string>; body: string } {
  const kept = Object.entries(headers).filter(([name]) => name === 'content-type' || name === 'user-agent' || name.startsWith('webhook-'))
  return { headers: Object.fromEntries(kept) as Record<string, string>, body }
}
