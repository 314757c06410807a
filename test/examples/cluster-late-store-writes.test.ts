import { suite } from 'uvu'
import { needing, POSTGRES, REDIS } from '../helpers/requires.ts'
import * as assert from 'uvu/assert'
import { startCluster, linkDevice, registerAccount } from '../helpers/cluster.ts'
import { waitFor } from '../helpers/gateway.ts'
import { post } from '../helpers/http.ts'
import { startHoldingProxy } from '../helpers/holding-proxy.ts'
import { startReceiver } from '../helpers/receiver.ts'

/**
 * Issue 27, finding 4: an instance whose link to the store is congested. A proxy between the
 * instance and its store holds the bytes for a few seconds, then lets them through in order: the
 * outbox writes of the messages it received meanwhile land after the instance gave up on them (the
 * store's 2 s time-out), and its retry finds them "already pending". Every one must still become a
 * webhook (the simulator server, the instance and the receiver each a process of its own).
 */
const test = suite('cluster mode: outbox writes that land after their time-out')

const PHONE = '5511990000001'
const contact = (i: number) => `55119700001${String(i % 100).padStart(2, '0')}`

const backends = [
  { name: 'Redis', url: REDIS.value, service: REDIS },
  { name: 'PostgreSQL', url: POSTGRES.value, service: POSTGRES },
]

for (const backend of backends) {
  needing(
    test,
    backend.service,
    `the late-store-writes test on ${backend.name}`,
  )(`${backend.name}: every message received while the store link held its bytes for 4 s becomes a webhook`, async () => {
    const target = new URL(backend.url!)
    const proxy = await startHoldingProxy({ host: target.hostname, port: Number(target.port || (backend.name === 'Redis' ? 6379 : 5432)) })
    target.host = `127.0.0.1:${proxy.port}`
    const receiver = await startReceiver()
    const cluster = await startCluster(target.toString(), 1)
    try {
      const authkey = await registerAccount(cluster)
      await linkDevice(cluster, 0, authkey, 'loja', PHONE, receiver.url)
      const ids: string[] = []
      const receive = async (i: number) =>
        ids.push((await post(`${cluster.sim.url}/_sim/send`, { from: contact(i), to: PHONE, type: 'text', text: `entrada ${i}` })).body.id)
      for (let i = 0; i < 5; i++) await receive(i)
      await waitFor(() => receiver.hooks.length >= 5, 15_000, 'the first 5 webhooks')

      // 4 s of held bytes: messages received in its first 1.5 s are written late, after their time-out.
      const held = proxy.hold(4_000)
      for (let i = 5; i < 35; i++) {
        await receive(i)
        await new Promise(resolve => setTimeout(resolve, 50))
      }
      await held
      for (let i = 35; i < 40; i++) await receive(i)

      const delivered = () => new Set(receiver.hooks.filter(h => !h.payload.fromMe).map(h => h.payload.idMessagem as string))
      await waitFor(() => delivered().size === ids.length, 20_000, 'every incoming message to become a webhook').catch(() => {})
      const lost = ids.filter(id => !delivered().has(id))
      console.log(`# ${backend.name}: ${lost.length} of ${ids.length} incoming messages never became a webhook`)
      assert.equal(lost, [], `${lost.length} of ${ids.length} lost`)
    } finally {
      await cluster.stop()
      await receiver.stop()
      await proxy.close()
    }
  })
}

test.run()
