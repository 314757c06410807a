import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport } from '../../../adapters/transport-memory/index.ts'
import type { WebhookSender } from '../../../src/ports/webhooks.ts'
import { inProcessCluster, registerAt } from '../../helpers/cluster-in-process.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { post } from '../../helpers/http.ts'

/**
 * A graceful stop (SIGTERM at a deploy) hands its devices back, then flushes its webhook outbox,
 * which waits for the POSTs in flight (up to the webhook time-out). The other instances take the
 * devices within a heartbeat of the hand-back (docs/scaling.md), not once the stop has ended: until
 * then nobody holds them, and their incoming messages and agent replies wait.
 */
const test = suite('cluster: devices handed back at a graceful stop')

const HEARTBEAT_MS = 300

/** Two instances, device `loja` linked and held by one (`holder`) with a webhook POST in flight (6 s); `closing`: the holder's graceful stop, begun at `started`. */
async function stopWithSlowWebhook() {
  const network = new MemoryNetwork()
  let posts = 0
  const slowReceiver: WebhookSender = { send: async () => (posts++, await new Promise(resolve => setTimeout(resolve, 6_000)), { status: 200 }) }
  const members = await inProcessCluster(2, () => ({
    transport: memoryTransport({ network }),
    instances: { heartbeatMs: HEARTBEAT_MS, ttlMs: 3_000 },
    webhooks: slowReceiver,
    webhookTimeoutMs: 10_000,
  }))
  const url = members[0]!.url
  const authkey = await registerAt(url, 'ana@example.com')
  const added = await post(`${url}/api/v2/qrcode`, { authkey, setAppkey: 'loja', webhook: 'https://hooks.example.com/loja' })
  const deviceId = added.body.id as string
  await network.scan({ deviceId }, '5511944443333')
  await waitFor(async () => (await post(`${url}/api/developer`, { authkey, message: 'loja', checkDispositivo: 'true' })).body?.dispositivo?.conectado === true)
  const holder = members.find(member => member.holds(deviceId))!
  const other = members.find(member => member !== holder)!
  await network.sendFromPhone('5511955556666', '5511944443333', { type: 'text', text: 'oi' })
  await waitFor(() => posts > 0, 5_000, 'the webhook POST in flight')
  const started = Date.now()
  const closing = holder.gateway.close()
  return { members, authkey, deviceId, holder, other, started, closing }
}

test('the other instance holds the devices within a couple of heartbeats of the hand-back, while the stopping one still waits for a slow webhook', async () => {
  const { members, deviceId, other, started, closing } = await stopWithSlowWebhook()
  try {
    let closedAt: number | undefined
    void closing.then(() => void (closedAt = Date.now() - started))
    await waitFor(() => other.holds(deviceId), 10_000, 'the other instance to hold the device')
    const takenAt = Date.now() - started
    assert.is(closedAt, undefined, `the stop was still flushing its outbox (${takenAt} ms)`)
    assert.ok(takenAt < 5 * HEARTBEAT_MS, `taken ${takenAt} ms after the stop began (at its end, about 6 s, before)`)
    await closing
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test('a device linked while an instance stops is made on one that stays, not on the leaving one (it holds no device, but answers 503)', async () => {
  const { members, authkey, deviceId, holder, other, closing } = await stopWithSlowWebhook()
  try {
    await waitFor(() => other.holds(deviceId), 10_000, 'the other instance to hold the handed-back device')
    const linked = await post(`${other.url}/api/v2/qrcode`, { authkey, setAppkey: 'nova' })
    assert.is(linked.status, 200, linked.text)
    assert.ok(other.holds(linked.body.id), 'made on the instance that stays')
    assert.not.ok(holder.holds(linked.body.id))
    await closing
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test.run()
