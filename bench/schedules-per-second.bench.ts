/**
 * schedules-per-second: scheduled texts sent per second by 3 gateway processes in cluster mode on one
 * Redis store (REDIS_URL) against 1 process in cluster mode on the same kind of store, both on one
 * simulator server (bench/servers/simulator.mjs). Each side links DEVICES devices (spread by the
 * cluster over its instances), then COUNT schedules (round robin over the devices, created through
 * every instance in turn) all due in the same second; the figure is COUNT / (the network's timestamp
 * of the last one - the due time). Every schedule must reach the network exactly once: the
 * simulator's `sent` grows by COUNT and stays there, and the contacts' inboxes hold each text once
 * (else the line is FAIL). Rounds alternate the two clusters (1, 3, 3, 1, ...); the figure is the
 * round pair whose ratio is the median. Report only.
 *
 * What bounds it: a device's due items go one after the other (claim, read the body, send, mark
 * sent: four store steps and a network round trip each), so the rate is at most the number of
 * devices over that chain's time, and with pacing (BENCH_MIN_INTERVAL_MS, 0 here) at most devices /
 * pacing whatever the number of processes.
 */
import { request, startServer } from './lib/process.ts'
import { linkDevices, oneAndThree, waitUntil, type BenchCluster } from './lib/cluster.ts'
import { redisUrl } from './lib/redis.ts'
import { clearStore } from './lib/stores.ts'
import { medianBy, note, report } from './lib/report.ts'

const COUNT = Number(process.env.BENCH_SCHEDULES ?? 1200)
const DEVICES = 12
const CONTACTS = 30
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const contact = (i: number) => `55119700${String(i % CONTACTS).padStart(5, '0')}`

/** One round on `cluster`: schedules per second, or a reason it is not a figure. */
let leadMs = 2_000 + COUNT * 5

async function round(
  cluster: BenchCluster,
  fixture: Awaited<ReturnType<typeof linkDevices>>,
  tag: string,
): Promise<{ rate: number; ms: number; firstMs: number }> {
  const sentBefore = (await cluster.sim.get('/_sim/stats')).sent as number
  // Due at the start of a second far enough ahead that creating them all ends before it (the lead
  // is 1.5 times what the last round's creating took, plus a second).
  const creating = Date.now()
  const dueAt = Math.ceil((creating + leadMs) / 1000) * 1000
  const agendamento = new Date(dueAt).toISOString().slice(0, 19).replace('T', ' ')
  const texts = new Set<string>()
  for (let i = 0; i < COUNT; i += 30) {
    await Promise.all(
      Array.from({ length: Math.min(30, COUNT - i) }, (_, j) => {
        const n = i + j
        const text = `agendada ${tag} ${n}`
        texts.add(text)
        return cluster.instances[n % cluster.instances.length]!.post('/api/create-message', {
          appkey: fixture.devices[n % DEVICES]!.appkey,
          authkey: fixture.authkey,
          to: contact(n),
          message: text,
          agendamento,
        })
      }),
    )
  }
  const late = Date.now() >= dueAt
  leadMs = 1_000 + 1.5 * (Date.now() - creating)
  if (late) {
    // A loaded machine took longer to create them than the lead allowed: no figure; once they are sent, the round again with the longer lead.
    note(`round ${tag}: creating the schedules took past their due time; again with a lead of ${Math.round(leadMs)} ms`)
    await waitUntil(async () => (await cluster.sim.get('/_sim/stats')).sent - sentBefore >= COUNT, 60_000, `${COUNT} late scheduled sends`)
    return round(cluster, fixture, `${tag}+`)
  }
  await waitUntil(async () => (await cluster.sim.get('/_sim/stats')).sent - sentBefore >= COUNT, 60_000, `${COUNT} scheduled sends`)
  await new Promise(resolve => setTimeout(resolve, 1_500)) // a second send would show up here
  const sent = (await cluster.sim.get('/_sim/stats')).sent - sentBefore
  const stamps: number[] = []
  const seen = new Map<string, number>()
  for (let c = 0; c < CONTACTS; c++) {
    for (const entry of (await request(`${cluster.sim.url}/_sim/inbox/${contact(c)}`)) as { text?: string; timestamp: number }[]) {
      if (!entry.text || !texts.has(entry.text)) continue
      seen.set(entry.text, (seen.get(entry.text) ?? 0) + 1)
      stamps.push(entry.timestamp)
    }
  }
  const twice = [...seen.values()].filter(times => times > 1).length
  if (sent !== COUNT || seen.size !== COUNT || twice > 0)
    throw new Error(`not exactly once: network sent ${sent} of ${COUNT}, ${seen.size} distinct texts arrived, ${twice} more than once`)
  const ms = Math.max(...stamps) - dueAt
  return { rate: COUNT / (ms / 1000), ms, firstMs: Math.min(...stamps) - dueAt }
}

const sim = await startServer('simulator.mjs')
const clusters: BenchCluster[] = []
try {
  const { one, three, oneFixture, threeFixture } = await oneAndThree(sim, redisUrl, DEVICES, clusters)
  const spread = three.instances.map((_, i) => threeFixture.devices.filter(d => d.holder === i).length)
  note(`${DEVICES} devices on each side; held by the 3 instances: ${spread.join(', ')}`)

  const pairs: { one: Awaited<ReturnType<typeof round>>; three: Awaited<ReturnType<typeof round>> }[] = []
  for (let r = 1; r <= ROUNDS; r++) {
    const runOne = () => round(one, oneFixture, `1p r${r}`)
    const runThree = () => round(three, threeFixture, `3p r${r}`)
    const pair = r % 2 ? { one: await runOne(), three: await runThree() } : { three: await runThree(), one: await runOne() }
    pairs.push(pair as (typeof pairs)[number])
    note(
      `round ${r}: 1 process ${pair.one.rate.toFixed(0)} schedules/s (first sent ${pair.one.firstMs} ms after the due time, last ${pair.one.ms} ms); 3 processes ${pair.three.rate.toFixed(0)} schedules/s (first ${pair.three.firstMs} ms, last ${pair.three.ms} ms); ratio ${(pair.three.rate / pair.one.rate).toFixed(2)}`,
    )
  }
  const middle = medianBy(pairs, p => p.three.rate / p.one.rate)
  note(`each of the ${ROUNDS * 2} rounds sent its ${COUNT} schedules exactly once (${DEVICES} devices, ${COUNT / DEVICES} each)`)
  // The value is 3 processes, the baseline 1 process: the line carries both rates and their ratio.
  report({ name: 'schedules-per-second', value: middle.three.rate, unit: 'schedules/s', baseline: middle.one.rate })
} finally {
  for (const cluster of clusters) {
    await cluster.stop()
    await clearStore(redisUrl, cluster.namespace).catch(error => note(`could not delete the Redis namespace ${cluster.namespace}: ${error}`))
  }
  await sim.stop()
}
