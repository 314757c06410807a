import { writeFileSync } from 'node:fs'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { formatWallClock } from '../../src/domain/messaging/schedule-time.ts'
import { startCluster, linkDevice, deviceState, type Cluster, registerAccount } from '../helpers/cluster.ts'
import { waitFor } from '../helpers/gateway.ts'
import { needing, POSTGRES, REDIS } from '../helpers/requires.ts'
import { post, request } from '../helpers/http.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

/**
 * Cluster mode end to end (issue 18): the simulator server, 3 gateway instances on one store (Redis,
 * then PostgreSQL) and a webhook receiver, every one a process of its own. Any instance answers any
 * request; each device is held by one instance; an instance killed, paused or restarted hands its
 * devices to the others without a new scan, and nothing is sent twice or lost.
 */
const test = suite('cluster mode: 3 instances, one simulated network, one store')

const DEVICES = 12
const devicePhone = (d: number) => `55119000000${String(d).padStart(2, '0')}`
const contact = (i: number) => `55119700000${String(i % 20).padStart(2, '0')}`

for (const service of [REDIS, POSTGRES]) {
  const onStore = needing(test, service, `the cluster end-to-end test on ${service.name}`)
  onStore(`${service.name}: sends, schedules and webhooks exactly once; kill -9, SIGSTOP and a rolling restart hand devices over without a fight`, async () => {
    const receiver = await startReceiver()
    const cluster = await startCluster(service.value!, 3, process.env.CLUSTER_LOG_LEVEL ? { LOG_LEVEL: process.env.CLUSTER_LOG_LEVEL } : {})
    try {
      const authkey = await registerAccount(cluster)
      assert.is((await request(`${cluster.instances[0]!.url}/_sim/stats`)).status, 404, 'a gateway joined to a simulator server mounts no /_sim routes')
      const byAppkey = await post(`${cluster.sim.url}/_sim/scan`, { authkey, appkey: 'd0', phone: devicePhone(0) })
      assert.is(byAppkey.status, 400, 'the simulator server has no gateway store: scan by code or QR')
      for (let d = 0; d < DEVICES; d++) await linkDevice(cluster, d, authkey, `d${d}`, devicePhone(d), receiver.url)
      const held = await Promise.all(cluster.instances.map(instance => cluster.health(instance)))
      assert.is(
        held.reduce((sum, h) => sum + h.devices.length, 0),
        DEVICES,
        'every device held once',
      )
      assert.ok(
        held.every(h => h.devices.length > 0),
        `each instance holds some: ${held.map(h => h.devices.length)}`,
      )

      await sendsOnce(cluster, authkey)
      await schedulesOnce(cluster, authkey)
      await webhooksOnce(cluster, receiver)
      assert.is((await cluster.sim.stats()).replaced, 0, 'no device was opened twice')

      const beforeKill = [...cluster.instances]
      await killed(cluster, authkey)
      const replacedAfterKill = (await cluster.sim.stats()).replaced
      // A replacement here has not been reproduced since it was seen once under load: say who connected the devices when.
      if (replacedAfterKill !== 0) console.log(`# replaced after kill -9: ${replacedAfterKill}\n${connectionLines(beforeKill, cluster)}`)
      assert.is(replacedAfterKill, 0, 'a killed instance holds nothing: no replacement')
      await cluster.add()
      await paused(cluster, authkey)
      await rollingRestart(cluster, authkey, receiver)
    } finally {
      await cluster.stop()
      await receiver.stop()
    }
  })
}

/** 300 texts spread over the 3 instances and the 12 devices: each reaches the network exactly once. */
async function sendsOnce(cluster: Cluster, authkey: string): Promise<void> {
  const before = (await cluster.sim.stats()).sent
  for (let i = 0; i < 300; i += 30) {
    const batch = Array.from({ length: 30 }, (_, j) =>
      cluster.call(i + j, '/api/create-message', { appkey: `d${(i + j) % DEVICES}`, authkey, to: contact(i + j), message: `texto ${i + j}` }),
    )
    for (const answer of await Promise.all(batch)) assert.is(answer.status, 200, answer.text)
  }
  assert.is((await cluster.sim.stats()).sent - before, 300)
}

/** 60 schedules due within the same few seconds, created through different instances: each sent once. */
async function schedulesOnce(cluster: Cluster, authkey: string): Promise<void> {
  const before = (await cluster.sim.stats()).sent
  const agendamento = formatWallClock(Math.ceil((Date.now() + 6_000) / 1000) * 1000, 'UTC')
  const answers = await Promise.all(
    Array.from({ length: 60 }, (_, i) =>
      cluster.call(i, '/api/create-message', { appkey: `d${i % DEVICES}`, authkey, to: contact(i), message: `agendada ${i}`, agendamento }),
    ),
  )
  for (const answer of answers) assert.is(answer.status, 200, answer.text)
  await waitFor(async () => (await cluster.sim.stats()).sent - before >= 60, 60_000, 'the 60 scheduled sends')
  await new Promise(resolve => setTimeout(resolve, 2_000)) // a second send would show up here
  assert.is((await cluster.sim.stats()).sent - before, 60)
  const texts: string[] = []
  for (let c = 0; c < 20; c++)
    for (const entry of (await request(`${cluster.sim.url}/_sim/inbox/${contact(c)}`)).body as { text?: string }[])
      if (entry.text?.startsWith('agendada ')) texts.push(entry.text)
  assert.is(new Set(texts).size, 60, 'each scheduled text reached its contact')
  assert.is(texts.length, 60, 'none twice')
}

/** 100 incoming messages to the 12 devices: exactly 100 webhook ids, none twice. */
async function webhooksOnce(cluster: Cluster, receiver: Receiver): Promise<void> {
  receiver.hooks.length = 0
  const ids: string[] = []
  for (let i = 0; i < 100; i++)
    ids.push((await post(`${cluster.sim.url}/_sim/send`, { from: contact(i), to: devicePhone(i % DEVICES), type: 'text', text: `entrada ${i}` })).body.id)
  await waitFor(() => new Set(receiver.hooks.filter(h => !h.payload.fromMe).map(h => h.payload.idMessagem)).size === 100, 30_000, '100 webhooks')
  await new Promise(resolve => setTimeout(resolve, 2_000))
  const incoming = receiver.hooks.filter(h => !h.payload.fromMe)
  assert.equal([...new Set(incoming.map(h => h.payload.idMessagem))].sort(), [...ids].sort())
  assert.is(new Set(incoming.map(h => h.headers['webhook-id'])).size, incoming.length, 'no webhook-id twice')
}

/** kill -9 of an instance: every device it held opens on the others within 30 s, and sends to them succeed. */
async function killed(cluster: Cluster, authkey: string): Promise<void> {
  const victim = cluster.instances.pop()!
  const lost = (await cluster.health(victim)).devices.length
  await victim.kill('SIGKILL')
  const started = Date.now()
  await waitFor(
    async () => (await Promise.all(cluster.instances.map(i => cluster.health(i)))).reduce((sum, h) => sum + h.devices.length, 0) === DEVICES,
    30_000,
    'the devices of the killed instance to open elsewhere',
  )
  console.log(`# kill -9: ${lost} devices open again on the others in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  for (let d = 0; d < DEVICES; d++)
    assert.is((await cluster.call(d, '/api/create-message', { appkey: `d${d}`, authkey, to: contact(d), message: 'depois da queda' })).status, 200)
}

/**
 * SIGSTOP of an instance past its time-to-live, then SIGCONT: the others take its devices (each once:
 * the simulator counts one replacement per device), and the paused one, finding its leases gone,
 * closes its sessions without reconnecting: no replacement after that.
 */
async function paused(cluster: Cluster, authkey: string): Promise<void> {
  const [stopped] = cluster.instances
  const taken = (await cluster.health(stopped!)).devices.length
  const replacedBefore = (await cluster.sim.stats()).replaced
  stopped!.child.kill('SIGSTOP')
  const others = cluster.instances.slice(1)
  await waitFor(
    async () => (await Promise.all(others.map(i => cluster.health(i)))).reduce((sum, h) => sum + h.devices.length, 0) === DEVICES,
    30_000,
    "the paused instance's devices to open elsewhere",
  )
  stopped!.child.kill('SIGCONT')
  await waitFor(async () => (await cluster.health(stopped!)).devices.length === 0, 15_000, 'the resumed instance to let its devices go')
  await new Promise(resolve => setTimeout(resolve, 5_000))
  const replaced = (await cluster.sim.stats()).replaced - replacedBefore
  assert.ok(replaced <= taken, `replaced grew by ${replaced}, at most the ${taken} devices taken over`)
  await new Promise(resolve => setTimeout(resolve, 3_000))
  assert.is((await cluster.sim.stats()).replaced - replacedBefore, replaced, 'and never again after')
  for (let d = 0; d < DEVICES; d++) assert.equal([d, await deviceState(cluster, d, authkey, `d${d}`)], [d, 'open'])
}

/**
 * A rolling SIGTERM restart of every instance, one at a time, under steady traffic: every send
 * answered 200 reached the network exactly once (the others were answered 503 and did not), and
 * every incoming message became its webhook.
 */
async function rollingRestart(cluster: Cluster, authkey: string, receiver: Receiver): Promise<void> {
  receiver.hooks.length = 0
  const sentBefore = (await cluster.sim.stats()).sent
  let running = true
  let ok = 0
  const refused: number[] = []
  const incoming: string[] = []
  const traffic = (async () => {
    for (let i = 0; running; i++) {
      const answer = await cluster
        .call(i, '/api/create-message', { appkey: `d${i % DEVICES}`, authkey, to: contact(i), message: `rolando ${i}` })
        .catch(() => undefined)
      if (answer?.status === 200) ok++
      else refused.push(answer?.status ?? 0)
      if (i % 3 === 0)
        incoming.push(
          (await post(`${cluster.sim.url}/_sim/send`, { from: contact(i), to: devicePhone(i % DEVICES), type: 'text', text: `durante ${i}` })).body.id,
        )
      await new Promise(resolve => setTimeout(resolve, 50))
    }
  })()
  const stopped: typeof cluster.instances = []
  for (let n = 0; n < 3; n++) {
    const old = cluster.instances.shift()!
    stopped.push(old)
    const started = Date.now()
    await old.kill('SIGTERM')
    await waitFor(
      async () => (await Promise.all(cluster.instances.map(i => cluster.health(i)))).reduce((sum, h) => sum + h.devices.length, 0) === DEVICES,
      15_000,
      "the leaving instance's devices to be taken",
    )
    console.log(`# SIGTERM: devices taken over in ${((Date.now() - started) / 1000).toFixed(1)} s`)
    await cluster.add()
  }
  running = false
  await traffic
  await waitFor(async () => (await cluster.sim.stats()).sent - sentBefore >= ok, 10_000, 'the answered sends on the network')
  assert.is(
    (await cluster.sim.stats()).sent - sentBefore,
    ok,
    `every send answered 200 reached the network once (${ok} sent, ${refused.length} refused: ${[...new Set(refused)]})`,
  )
  // A refusal is a 503 for the client to retry, or a connection the leaving instance no longer took: never a send.
  assert.ok(
    refused.every(status => status === 503 || status === 0),
    `refusals are 503 for the client to retry: ${refused}`,
  )
  const received = () => new Set(receiver.hooks.filter(h => !h.payload.fromMe).map(h => h.payload.idMessagem))
  await waitFor(() => received().size === incoming.length, 30_000, 'every incoming message as a webhook').catch(async err => {
    // Say which messages are missing and what the instances (the stopped ones too) logged of them.
    const missing = incoming.filter(id => !received().has(id))
    const all = [...stopped, ...cluster.instances].flatMap(i => i.output().split('\n'))
    if (process.env.CLUSTER_LOG_FILE) writeFileSync(process.env.CLUSTER_LOG_FILE, `${missing.join('\n')}\n${all.join('\n')}`)
    const lines = all.filter(line => missing.some(id => line.includes(id)) || /"level":(40|50)/.test(line))
    throw new Error(
      `${err.message}: missing ${missing.join(', ')}; in the store: ${await storedOf(cluster, missing)}; simulator ${JSON.stringify(await cluster.sim.stats())}; devices ${await devicesSeen(cluster, authkey)}\n${lines.slice(-40).join('\n')}`,
    )
  })
  console.log(`# rolling restart: ${ok} sends answered 200, ${refused.length} answered 503, ${incoming.length} incoming messages, all webhooks delivered`)
}

/**
 * The log lines of leases, fences and departures of `instances` (each line after its instance's
 * url and pid) and the simulator's connection lines: all there are at LOG_LEVEL=debug
 * (CLUSTER_LOG_LEVEL=debug), leases and departures only otherwise.
 */
function connectionLines(instances: Cluster['instances'], cluster: Cluster): string {
  const wanted = /lease|late|gone|taken|again|replaced|device connection/
  const lines = instances.flatMap(instance =>
    instance
      .output()
      .split('\n')
      .filter(line => wanted.test(line))
      .map(line => `${instance.url} pid ${instance.child.pid}: ${line}`),
  )
  return [
    ...lines,
    ...cluster.sim
      .output()
      .split('\n')
      .filter(line => wanted.test(line))
      .map(line => `sim: ${line}`),
  ].join('\n')
}

/** Each device's state as instance 0 tells it, and which instance holds it. */
async function devicesSeen(cluster: Cluster, authkey: string): Promise<string> {
  const holders = await Promise.all(cluster.instances.map(async (instance, i) => ({ i, devices: (await cluster.health(instance)).devices })))
  const seen: string[] = []
  for (let d = 0; d < DEVICES; d++) {
    const status = (await cluster.call(0, '/api/developer', { authkey, message: `d${d}`, checkDispositivo: 'true' })).body?.dispositivo
    seen.push(
      `d${d}:${status?.estado}@${
        holders
          .filter(h => h.devices.includes(status?.id))
          .map(h => h.i)
          .join('+') || 'none'
      }`,
    )
  }
  return seen.join(' ')
}

/** The store's keys and records that name any of `ids` (what became of a message that did not arrive). */
async function storedOf(cluster: Cluster, ids: string[]): Promise<string> {
  const storage = await storageFromUrl(cluster.env.GATEWAY_STORE!, { namespace: cluster.env.GATEWAY_STORE_NAMESPACE })
  try {
    const found: string[] = []
    for await (const [key, value] of storage.list('')) {
      const text = `${key} ${JSON.stringify(value)}`
      if (ids.some(id => text.includes(id))) found.push(text.slice(0, 600))
    }
    return found.join(' | ') || 'nothing'
  } finally {
    await storage.close?.()
  }
}

test.run()
