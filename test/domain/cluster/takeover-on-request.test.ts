import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport } from '../../../adapters/transport-memory/index.ts'
import { inProcessCluster, registerAt } from '../../helpers/cluster-in-process.ts'
import { post } from '../../helpers/http.ts'
import { waitFor } from '../../helpers/gateway.ts'

test('a request that takes a handed-back device over opens its session: the send goes out and the device is connected, not only leased', async () => {
  const network = new MemoryNetwork()
  // Heartbeats far apart: no balancer scan takes the device before the request does.
  const members = await inProcessCluster(2, () => ({ transport: memoryTransport({ network }), instances: { heartbeatMs: 60_000, ttlMs: 120_000 } }))
  const [a] = members
  try {
    const authkey = await registerAt(a!.url, 'takeover@example.com')
    const added = await post(`${a!.url}/api/v2/qrcode`, { authkey, setAppkey: 'loja' })
    assert.is(added.status, 200, added.text)
    await network.scan({ deviceId: added.body.id }, '5511944443333')
    await waitFor(
      async () => (await post(`${a!.url}/api/developer`, { authkey, message: 'loja', checkDispositivo: 'true' })).body?.dispositivo?.conectado === true,
    )
    const holder = members.find(m => m.holds(added.body.id))!
    const other = members.find(m => m !== holder)!
    // The holder leaves gracefully: it closes the session and hands the lease back.
    await holder.stop()
    members.splice(members.indexOf(holder), 1)
    const sent = await post(`${other.url}/api/create-message`, { authkey, appkey: 'loja', to: '5511988887777', message: 'depois da troca' })
    assert.is(sent.status, 200, sent.text)
    assert.ok(other.holds(added.body.id))
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
