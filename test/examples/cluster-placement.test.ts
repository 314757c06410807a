import { suite } from 'uvu'
import { needing, REDIS } from '../helpers/requires.ts'
import * as assert from 'uvu/assert'
import { startCluster, deviceState, linkDevice, qrText, registerAccount } from '../helpers/cluster.ts'
import { waitFor } from '../helpers/gateway.ts'
import { post } from '../helpers/http.ts'
import { startReceiver } from '../helpers/receiver.ts'

/**
 * Issue 27, finding 8a: new devices are made on the least loaded instance. 12 devices created one
 * after another, round-robin through 3 instances, as a provisioning script does (each QR asked
 * once the previous one was answered, all within a heartbeat or two), then scanned: they end within
 * one of an even share on every instance (the simulator server and each instance a process of its own).
 */
const test = suite('cluster mode: where new devices are made')

const onRedis = needing(test, REDIS, 'the new-device placement test')

onRedis('12 devices linked round-robin through 3 instances end 4 ± 1 on each', async () => {
  const cluster = await startCluster(REDIS.value!, 3)
  try {
    const authkey = await registerAccount(cluster)
    const qrs: string[] = []
    for (let d = 0; d < 12; d++) {
      const created = await cluster.call(d, '/api/v2/qrcode', { authkey, setAppkey: `p${d}` })
      assert.is(created.status, 200, created.text)
      qrs.push(qrText(created.body.qrcode))
    }
    for (const [d, qr] of qrs.entries())
      assert.is((await post(`${cluster.sim.url}/_sim/scan`, { qr, phone: `55119000081${String(d).padStart(2, '0')}` })).status, 200)
    for (let d = 0; d < 12; d++) await waitFor(async () => (await deviceState(cluster, d, authkey, `p${d}`)) === 'open', 30_000, `p${d} to open`)
    const held = (await Promise.all(cluster.instances.map(instance => cluster.health(instance)))).map(h => h.devices.length)
    console.log(`# 12 new devices through 3 instances: ${held.join('/')}`)
    assert.is(
      held.reduce((sum, n) => sum + n, 0),
      12,
      'every device held once',
    )
    for (const count of held) assert.ok(count >= 3 && count <= 5, `held ${held.join('/')}`)
  } finally {
    await cluster.stop()
  }
})

onRedis('a device linked while an instance stops gracefully is made on one that stays (the leaving one holds none, and answers 503)', async () => {
  const cluster = await startCluster(REDIS.value!, 2)
  // The stop flushes the webhook outbox: a receiver answering in 8 s keeps the leaving instance registered meanwhile.
  const receiver = await startReceiver(() => ({ status: 200, delayMs: 8_000 }))
  try {
    const authkey = await registerAccount(cluster)
    const device = await linkDevice(cluster, 0, authkey, 'loja', '5511900008200', receiver.url)
    const held = await Promise.all(cluster.instances.map(instance => cluster.health(instance)))
    const leaving = held.findIndex(h => h.devices.includes(device.id))
    const staying = 1 - leaving
    await post(`${cluster.sim.url}/_sim/send`, { from: '5511970008200', to: '5511900008200', type: 'text', text: 'oi' })
    await receiver.waitForHooks(1, 10_000)

    const stopped = cluster.instances[leaving]!.kill('SIGTERM')
    await waitFor(async () => (await cluster.health(cluster.instances[staying]!)).devices.includes(device.id), 10_000, 'the handed-back device taken')
    const linked = await cluster.call(staying, '/api/v2/qrcode', { authkey, setAppkey: 'nova' })
    assert.is(linked.status, 200, linked.text)
    assert.ok((await cluster.health(cluster.instances[staying]!)).devices.includes(linked.body.id), 'made on the instance that stays')
    await stopped
  } finally {
    await receiver.stop()
    await cluster.stop()
  }
})

test.run()
