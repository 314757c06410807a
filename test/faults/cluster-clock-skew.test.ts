import { existsSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { formatWallClock } from '../../src/domain/messaging/schedule-time.ts'
import { startCluster, linkDevice, type Cluster, registerAccount } from '../helpers/cluster.ts'
import { waitFor } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'
import { needing, POSTGRES, REDIS, type Service } from '../helpers/requires.ts'
import { startStandalone, type StandaloneServer } from '../helpers/standalone.ts'

/**
 * Hosts whose clocks disagree (issue 27, finding 6): 3 gateway instances in cluster mode, one of
 * them under Debian's libfaketime (its wall clock 20 s ahead, then 20 s behind; its monotonic clock
 * untouched, as with a host whose NTP is off), the simulator server, each a process of its own.
 * Liveness must not compare one host's clock with another's: no device is taken from a live holder
 * (the simulator's `replaced` stays 0), every device stays held once, and schedules for a few
 * seconds ahead are accepted through every instance and sent once.
 */
const test = suite('one cluster instance whose clock is 20 s off')

const DEVICES = 6
const TTL_MS = 6_000
/** The offsets tried in turn (`SKEW_OFFSETS=-20s` to measure one alone). */
const OFFSETS = (process.env.SKEW_OFFSETS ?? '+20s,-20s').split(',')
const devicePhone = (d: number) => `55119200000${String(d).padStart(2, '0')}`
const contact = (i: number) => `55119600000${String(i % 20).padStart(2, '0')}`

/** libfaketime as Debian's `faketime` package installs it (preloaded straight into the node process, so signals reach it). */
const libfaketime = ['x86_64-linux-gnu', 'aarch64-linux-gnu', '']
  .map(arch => `/usr/lib/${arch}${arch ? '/' : ''}faketime/libfaketime.so.1`)
  .find(path => existsSync(path))
const FAKETIME: Service = {
  name: "Debian's faketime (libfaketime)",
  value: spawnSync('sh', ['-c', 'command -v faketime']).status === 0 ? libfaketime : undefined,
  how: 'apt-get install -y faketime (.ci/run does)',
}

/** The environment that shifts a process's wall clock by `offset` (`+20s`, `-20s`), its monotonic clock left alone. */
const skewed = (offset: string) => ({ LD_PRELOAD: libfaketime!, FAKETIME: offset, FAKETIME_DONT_FAKE_MONOTONIC: '1' })

for (const backend of [REDIS, POSTGRES]) {
  // Both are needed: faketime first (its skip line once per store), then the store.
  const withSkew = needing(test, FAKETIME.value === undefined ? FAKETIME : backend, `the clock-skew cluster test on ${backend.name}`)
  withSkew(`${backend.name}: an instance 20 s ahead, then 20 s behind, takes no device from a live holder and every instance accepts schedules`, async () => {
    const cluster = await startCluster(backend.value!, 1, {
      GATEWAY_LEASE_TTL_MS: String(TTL_MS),
      ...(process.env.CLUSTER_LOG_LEVEL ? { LOG_LEVEL: process.env.CLUSTER_LOG_LEVEL } : {}),
    })
    try {
      let current = OFFSETS[0]!
      // The second normal instance and the skewed one start together.
      let [odd] = await Promise.all([addSkewed(cluster, current), cluster.add()])
      const authkey = await registerAccount(cluster)
      for (let d = 0; d < DEVICES; d++) await linkDevice(cluster, d, authkey, `d${d}`, devicePhone(d))
      for (const offset of OFFSETS) {
        if (offset !== current) {
          // The same host's clock now off the other way: the instance restarts (SIGTERM hands its devices back).
          await stopGracefully(cluster, odd)
          odd = await addSkewed(cluster, (current = offset))
          // A normal instance leaves too: its devices go to the least loaded, the restarted one.
          await stopGracefully(cluster, cluster.instances[0]!)
          await cluster.add()
        }
        assert.ok((await cluster.health(odd)).devices.length > 0, 'the instance whose clock is off holds devices')
        const replacedBefore = (await cluster.sim.stats()).replaced
        // Two times-to-live of sends through every instance: a live holder judged gone would lose devices here.
        const statuses: number[] = []
        const until = Date.now() + 2 * TTL_MS
        for (let i = 0; Date.now() < until; i++) {
          // Instance i % 3, device i / 3: every instance is asked for every device.
          statuses.push(
            (
              await cluster.call(i, '/api/create-message', {
                appkey: `d${Math.floor(i / 3) % DEVICES}`,
                authkey,
                to: contact(i),
                message: `relógio ${offset} ${i}`,
              })
            ).status,
          )
          await new Promise(resolve => setTimeout(resolve, 50))
        }
        const refusedSchedules = await schedulesThroughEvery(cluster, authkey, offset)
        const replaced = (await cluster.sim.stats()).replaced - replacedBefore
        const held = (await Promise.all(cluster.instances.map(i => cluster.health(i)))).map(h => h.devices)
        console.log(
          `# clock ${offset} (${backend.name}): replaced ${replaced}, devices held ${held.map(h => h.length)}, ${statuses.filter(s => s !== 200).length} of ${statuses.length} sends not 200, ${refusedSchedules} of ${3 * 4} schedules refused`,
        )
        assert.is(replaced, 0, `no device taken from a live holder (clock ${offset})`)
        assert.is(held.flat().length, DEVICES, 'every device held')
        assert.is(new Set(held.flat()).size, DEVICES, 'by one instance')
        assert.ok(
          statuses.every(s => s === 200),
          `every send answered 200: ${[...new Set(statuses)]}`,
        )
        assert.is(refusedSchedules, 0, 'schedules accepted through every instance')
      }
    } finally {
      await cluster.stop()
    }
  })
}

/** SIGTERM an instance (it hands its devices back) and wait until the others hold every device. */
async function stopGracefully(cluster: Cluster, instance: StandaloneServer): Promise<void> {
  await instance.kill('SIGTERM')
  cluster.instances.splice(cluster.instances.indexOf(instance), 1)
  await waitFor(
    async () => (await Promise.all(cluster.instances.map(i => cluster.health(i)))).reduce((sum, h) => sum + h.devices.length, 0) === DEVICES,
    30_000,
    'the devices of the instance that left to be taken',
  )
}

/** Start one more cluster instance whose wall clock is `offset` off, and check that it is. */
async function addSkewed(cluster: Cluster, offset: string): Promise<StandaloneServer> {
  const instance = await startStandalone({ ...cluster.env, ...skewed(offset) })
  cluster.instances.push(instance)
  // pino stamps each line with the process's wall clock: it shows the offset took hold.
  const lines = instance
    .output()
    .split('\n')
    .filter(line => line.startsWith('{'))
  const stamped = JSON.parse(lines[lines.length - 1]!).time as number
  const off = (stamped - Date.now()) / 1000
  assert.ok(Math.abs(off - parseInt(offset, 10)) < 5, `the instance's clock is ${off.toFixed(1)} s off, meant ${offset}`)
  return instance
}

/**
 * 4 schedules through each instance for 5 s ahead of the test's clock (the true one): answers not
 * 200 are counted; the accepted ones must each reach the network once.
 */
async function schedulesThroughEvery(cluster: Cluster, authkey: string, offset: string): Promise<number> {
  const before = (await cluster.sim.stats()).sent
  const agendamento = formatWallClock(Math.ceil((Date.now() + 5_000) / 1000) * 1000, 'UTC')
  const count = cluster.instances.length * 4
  const answers = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      cluster.call(i, '/api/create-message', { appkey: `d${i % DEVICES}`, authkey, to: contact(i), message: `agendada ${offset} ${i}`, agendamento }),
    ),
  )
  const accepted = answers.filter(a => a.status === 200).length
  await waitFor(async () => (await cluster.sim.stats()).sent - before >= accepted, 60_000, 'the accepted schedules on the network')
  await new Promise(resolve => setTimeout(resolve, 1_000)) // a second send would show up here
  assert.is((await cluster.sim.stats()).sent - before, accepted, 'each accepted schedule sent once')
  const texts: string[] = []
  for (let c = 0; c < 20; c++)
    for (const entry of (await request(`${cluster.sim.url}/_sim/inbox/${contact(c)}`)).body as { text?: string }[])
      if (entry.text?.startsWith(`agendada ${offset} `)) texts.push(entry.text)
  assert.is(new Set(texts).size, accepted, 'each reached its contact')
  return count - accepted
}

test.run()
