import { Webhook } from 'standardwebhooks'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { waitFor } from '../helpers/gateway.ts'
import { registerAccount } from '../helpers/cluster.ts'
import { post, request } from '../helpers/http.ts'
import { linkOnPeer, startPeerCluster, type PeerCluster } from '../helpers/real-stack-cluster.ts'
import { needing, REDIS } from '../helpers/requires.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

/**
 * Cluster mode on the real Baileys stack (issue 23 item 4): the local WhatsApp peer as a server of
 * its own (`npm run wa-peer`), 3 gateway instances on Redis with GATEWAY_TRANSPORT=baileys
 * GATEWAY_WA_PEER=<the peer> and a webhook receiver, each a process of its own. Devices linked by a
 * phone's scan send (the phones decrypt) and receive (one webhook each) through any instance; after
 * `kill -9` of a holder its devices log in on the others from the auth state in the store (a login
 * on the peer, no pairing), read what arrived while they were down, send and receive again, and no
 * device is ever connected twice (`replaced` stays 0).
 */
const test = suite('cluster mode on the real Baileys stack: 3 instances, one WhatsApp peer, Redis')

const DEVICES = 4
const devicePhone = (d: number) => `55119300000${String(d).padStart(2, '0')}`
const contact = (d: number) => `55119400000${String(d).padStart(2, '0')}`

interface Linked {
  name: string
  id: string
  phone: string
  webhookSecret: string
}

const onRedis = needing(test, REDIS, 'the real-stack cluster test')
onRedis('kill -9 of a holder: its devices log in on the others from the stored auth state (no scan), send and receive; replaced stays 0', async () => {
  const phases: string[] = []
  let mark = Date.now()
  const phase = (name: string) => void (phases.push(`${name} ${((Date.now() - mark) / 1000).toFixed(1)} s`), (mark = Date.now()))
  const receiver = await startReceiver()
  const cluster = await startPeerCluster(REDIS.value!, 3, process.env.CLUSTER_LOG_LEVEL ? { LOG_LEVEL: process.env.CLUSTER_LOG_LEVEL } : {}).catch(
    async err => {
      await receiver.stop()
      throw err
    },
  )
  try {
    const authkey = await registerAccount(cluster)
    for (let d = 0; d < DEVICES; d++) {
      const phoned = await post(`${cluster.sim.url}/_sim/phones`, { phone: contact(d), pushName: `Contato ${d}` })
      assert.is(phoned.status, 200, phoned.text)
    }
    phase('start')
    const devices: Linked[] = []
    for (let d = 0; d < DEVICES; d++) {
      const linked = await linkOnPeer(cluster, d, authkey, `d${d}`, devicePhone(d), receiver.url)
      devices.push({ name: `d${d}`, phone: devicePhone(d), ...linked })
    }
    const held = await Promise.all(cluster.instances.map(instance => cluster.health(instance)))
    assert.equal(held.flatMap(h => h.devices).sort(), devices.map(d => d.id).sort(), 'every device held once')
    const linkedStats = await cluster.sim.stats()
    assert.equal([linkedStats.peer.pairings, linkedStats.replaced], [DEVICES, 0], JSON.stringify(linkedStats))

    phase('link')
    await sendAndReceive(cluster, authkey, receiver, devices, 'antes')
    phase('send and receive')

    // The holder of the most devices dies at once; its peers see its connections close.
    const byDevices = [...cluster.instances.keys()].sort((a, b) => held[b]!.devices.length - held[a]!.devices.length)
    const victim = cluster.instances.splice(byDevices[0]!, 1)[0]!
    const lost = devices.filter(d => held[byDevices[0]!]!.devices.includes(d.id))
    assert.ok(lost.length > 0, 'the victim held devices')
    const before = new Map(await Promise.all(devices.map(async d => [d.name, (await cluster.sim.devices(d.phone))[0]!] as const)))
    const loginsBefore = (await cluster.sim.stats()).peer.logins
    await victim.kill('SIGKILL')
    const started = Date.now()
    await waitFor(
      async () => (await Promise.all(lost.map(d => cluster.sim.devices(d.phone)))).every(([info]) => !info!.connected),
      10_000,
      'the peer to see the killed connections close',
    )

    // What the phones send while nobody holds the devices waits on the peer for their next login.
    const whileDown = await Promise.all(
      lost.map(
        async d =>
          (await post(`${cluster.sim.url}/_sim/send`, { from: contact(Number(d.name.slice(1))), to: d.phone, type: 'text', text: `enquanto caído ${d.name}` }))
            .body.id as string,
      ),
    )
    await waitFor(
      async () => (await Promise.all(cluster.instances.map(i => cluster.health(i)))).reduce((sum, h) => sum + h.devices.length, 0) === DEVICES,
      30_000,
      'the devices of the killed instance to be held by the others',
    )
    await waitFor(
      async () => (await Promise.all(lost.map(d => cluster.sim.devices(d.phone)))).every(([info]) => info!.connected),
      30_000,
      'the lost devices to log in again',
    )
    console.log(`# kill -9: ${lost.length} of ${DEVICES} devices logged in again on the others in ${((Date.now() - started) / 1000).toFixed(1)} s`)

    const after = await cluster.sim.stats()
    assert.is(after.peer.pairings, DEVICES, 'no new pairing: no scan')
    assert.is(after.peer.logins - loginsBefore, lost.length, 'one login per device taken over')
    for (const d of devices) {
      const [info] = await cluster.sim.devices(d.phone)
      const expected = before.get(d.name)!.logins + (lost.includes(d) ? 1 : 0)
      assert.equal(
        [d.name, info!.jid, info!.connected, info!.logins],
        [d.name, before.get(d.name)!.jid, true, expected],
        'the same linked device, logged in again only when taken over',
      )
    }
    await waitFor(() => whileDown.every(id => incoming(receiver, id).length > 0), 30_000, 'the webhooks of what arrived while the devices were down')

    phase('failover')
    await sendAndReceive(cluster, authkey, receiver, devices, 'depois')
    phase('send and receive again')
    console.log(`# phases: ${phases.join(', ')}; 503 answers retried: ${cluster.retried.length} (${[...new Set(cluster.retried)].join(', ')})`)
    for (const id of whileDown) assert.is(incoming(receiver, id).length, 1, `the message ${id} that waited arrived once`)

    const stats = await cluster.sim.stats()
    assert.equal([stats.replaced, stats.peer.replaced, stats.peer.pairings], [0, 0, DEVICES], `no device was connected twice: ${JSON.stringify(stats)}`)
    const records = await cluster.sim.records()
    assert.equal(records.problems, [], 'nothing went wrong on the peer')
  } catch (err) {
    // What the peer and the instances saw, to tell a defect from a slow machine.
    const seen = await Promise.all([cluster.sim.stats(), cluster.sim.records()]).catch(e => String(e))
    console.log(`# peer: ${JSON.stringify(seen)}\n${cluster.sim.output().slice(-3_000)}`)
    for (const instance of cluster.instances) console.log(`# instance ${instance.url}:\n${instance.output().slice(-6_000)}`)
    throw err
  } finally {
    await cluster.stop()
    await receiver.stop()
  }
})

test.run()

/**
 * Each device sends a text through an instance other than its holder's neighbour in turn (the
 * contact's phone decrypts exactly it) and gets one from its contact (exactly one webhook, signed).
 */
async function sendAndReceive(cluster: PeerCluster, authkey: string, receiver: Receiver, devices: Linked[], label: string): Promise<void> {
  for (const [d, device] of devices.entries()) {
    const text = `${label}: saída de ${device.name}`
    const sent = await cluster.call(d + 1, '/api/create-message', { appkey: device.name, authkey, to: contact(d), message: text })
    assert.is(sent.status, 200, sent.text)
    const inbox = async () => (await request(`${cluster.sim.url}/_sim/inbox/${contact(d)}`)).body as Record<string, unknown>[]
    await waitFor(async () => (await inbox()).some(m => m.id === sent.body.id), 20_000, `${contact(d)} to decrypt ${sent.body.id}`)
    const got = (await inbox()).find(m => m.id === sent.body.id)!
    assert.equal([got.from, got.type, got.text], [device.phone, 'text', text])
  }
  const ids: string[] = []
  for (const [d, device] of devices.entries()) {
    const sent = await post(`${cluster.sim.url}/_sim/send`, { from: contact(d), to: device.phone, type: 'text', text: `${label}: entrada de ${device.name}` })
    assert.is(sent.status, 200, sent.text)
    ids.push(sent.body.id)
  }
  await waitFor(() => ids.every(id => incoming(receiver, id).length > 0), 20_000, `the ${label} webhooks`)
  await new Promise(resolve => setTimeout(resolve, 2_000)) // a second delivery would show up here
  for (const [d, device] of devices.entries()) {
    const hooks = incoming(receiver, ids[d]!)
    assert.is(hooks.length, 1, `one webhook for ${ids[d]}`)
    const hook = new Webhook(device.webhookSecret).verify(hooks[0]!.body, hooks[0]!.headers) as Record<string, unknown>
    assert.equal([hook.event, hook.from, hook.to, hook.text, hook.fromMe], ['Texto', contact(d), device.phone, `${label}: entrada de ${device.name}`, false])
  }
}

/** The webhook requests about incoming message `id`. */
function incoming(receiver: Receiver, id: string) {
  return receiver.hooks.filter(h => h.payload?.idMessagem === id && !h.payload.fromMe)
}
