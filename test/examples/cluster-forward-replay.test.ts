import { suite } from 'uvu'
import { needing, REDIS } from '../helpers/requires.ts'
import * as assert from 'uvu/assert'
import { startCluster, linkDevice, type Cluster, registerAccount } from '../helpers/cluster.ts'
import { waitFor } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'
import { startHoldingProxy, type HoldingProxy } from '../helpers/holding-proxy.ts'
import { exchange, openSocket } from '../helpers/raw-http.ts'
import { freePort, startStandalone } from '../helpers/standalone.ts'

/**
 * Issue 27, finding 7: a forwarded send captured on the wire between two instances, its holder
 * leaving gracefully, the same bytes played again to the instance that took the device. Each
 * instance is advertised through a proxy that keeps what was sent to it (an eavesdropper on the
 * cluster's network); the simulator server and the 3 instances are processes of their own.
 */
const test = suite('cluster mode: a captured forward replayed to the new holder')

const PHONE = '5511990000071'
const CONTACT = '5511970000071'

const onRedis = needing(test, REDIS, 'the forward replay test')

onRedis('the same bytes replayed to the instance that took the device are refused 403, and the text reaches the contact once', async () => {
  const cluster = await startCluster(REDIS.value!, 0)
  const proxies: HoldingProxy[] = []
  try {
    for (let i = 0; i < 3; i++) {
      const port = await freePort()
      const proxy = await startHoldingProxy({ host: '127.0.0.1', port })
      proxies.push(proxy)
      cluster.instances.push(await startStandalone({ ...cluster.env, GATEWAY_ADVERTISE_URL: `http://127.0.0.1:${proxy.port}` }, port))
    }
    const authkey = await registerAccount(cluster)
    const device = await linkDevice(cluster, 0, authkey, 'alvo', PHONE)
    const holderIndex = await holderOf(cluster, device.id)
    const entry = (holderIndex + 1) % 3

    for (const proxy of proxies) proxy.takeSent()
    const sent = await cluster.call(entry, '/api/create-message', { appkey: 'alvo', authkey, to: CONTACT, message: 'só uma vez' })
    assert.is(sent.status, 200, sent.text)
    const captured = proxies[holderIndex]!.takeSent()
    const capturedAt = Date.now()
    assert.ok(captured.toString('latin1').startsWith('POST /api/create-message '), "the forward went through the holder's link")
    assert.is(await textsAt(cluster), 1)

    // The holder leaves gracefully; another instance takes the device.
    await cluster.instances[holderIndex]!.kill('SIGTERM')
    const rest = cluster.instances.filter((_, i) => i !== holderIndex)
    await waitFor(
      async () => (await Promise.all(rest.map(i => cluster.health(i)))).some(h => h.devices.includes(device.id)),
      20_000,
      'the device to open on another instance',
    )
    const newHolder = (await Promise.all(rest.map(async i => ({ i, held: (await cluster.health(i)).devices })))).find(h => h.held.includes(device.id))!.i

    const socket = await openSocket(newHolder.url)
    const after = ((Date.now() - capturedAt) / 1000).toFixed(1)
    const replayed = await exchange(socket, captured)
    socket.destroy()
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(replayed)?.[1])
    const texts = await textsAt(cluster)
    console.log(`# the captured forward replayed to the new holder ${after} s after it was sent: ${status}; the text reached the contact ${texts} time(s)`)
    assert.is(status, 403, replayed)
    assert.is(texts, 1, 'the text reached the contact once')
  } finally {
    await cluster.stop()
    for (const proxy of proxies) await proxy.close()
  }
})

/** The index of the instance holding the device. */
async function holderOf(cluster: Cluster, deviceId: string): Promise<number> {
  const held = await Promise.all(cluster.instances.map(i => cluster.health(i)))
  const index = held.findIndex(h => h.devices.includes(deviceId))
  if (index < 0) throw new Error('no instance holds the device')
  return index
}

/** How many times the text reached the contact. */
async function textsAt(cluster: Cluster): Promise<number> {
  const inbox = (await request(`${cluster.sim.url}/_sim/inbox/${CONTACT}`)).body as { text?: string }[]
  return inbox.filter(entry => entry.text === 'só uma vez').length
}

test.run()
