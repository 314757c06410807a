import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport } from '../../../adapters/transport-memory/index.ts'
import { inProcessCluster, linkedDeviceInCluster } from '../../helpers/cluster-in-process.ts'
import { post } from '../../helpers/http.ts'

test('a request that takes a handed-back device over opens its session: the send goes out and the device is connected, not only leased', async () => {
  const network = new MemoryNetwork()
  // Heartbeats far apart: no balancer scan takes the device before the request does.
  const members = await inProcessCluster(2, () => ({ transport: memoryTransport({ network }), instances: { heartbeatMs: 60_000, ttlMs: 120_000 } }))
  try {
    const { authkey, deviceId, holder, other } = await linkedDeviceInCluster(members, network, 'takeover@example.com')
    // The holder leaves gracefully: it closes the session and hands the lease back.
    await holder.stop()
    members.splice(members.indexOf(holder), 1)
    const sent = await post(`${other.url}/api/create-message`, { authkey, appkey: 'loja', to: '5511988887777', message: 'depois da troca' })
    assert.is(sent.status, 200, sent.text)
    assert.ok(other.holds(deviceId))
    assert.equal(
      network.inbox('5511988887777').map(entry => ('text' in entry ? entry.text : entry.type)),
      ['depois da troca'],
    )
    // Its session is open: it is connected, and not only leased.
    const status = (await post(`${other.url}/api/developer`, { authkey, message: 'loja', checkDispositivo: 'true' })).body.dispositivo
    assert.is(status.conectado, true)
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test.run()
