import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport } from '../../../adapters/transport-memory/index.ts'
import { internalsOf } from '../../../src/internals.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { inProcessCluster, registerAt } from '../../helpers/cluster-in-process.ts'
import { post, request } from '../../helpers/http.ts'

test('the share page of a linked device nobody holds opens its session with its credentials, never a new link', async () => {
  const network = new MemoryNetwork()
  // Heartbeats far apart: no balancer scan takes the device before the page does.
  const members = await inProcessCluster(2, () => ({ transport: memoryTransport({ network }), instances: { heartbeatMs: 60_000, ttlMs: 120_000 } }))
  try {
    const authkey = await registerAt(members[0]!.url, 'share-unheld@example.com')
    const shared = await post(`${members[0]!.url}/api/developer`, { authkey, message: 'loja', conecteQR: 'true' })
    assert.is(shared.status, 200, shared.text)
    const deviceId: string = shared.body.id
    await network.scan({ deviceId }, '5511944443333')
    await waitFor(() => members.some(m => m.holds(deviceId)))
    const holder = members.find(m => m.holds(deviceId))
    await waitFor(
      async () => (await post(`${holder!.url}/api/developer`, { authkey, message: 'loja', checkDispositivo: 'true' })).body?.dispositivo?.conectado === true,
    )
    const other = members.find(m => m !== holder)!
    // The holder leaves gracefully: the session is closed, the lease handed back, nobody holds the device (a failover).
    await holder!.stop()
    members.splice(members.indexOf(holder!), 1)

    const token = new URL(shared.body.link).pathname.split('/').pop()
    const state = await request(`${other.url}/qr/${token}/state`)
    assert.is(state.status, 200, state.text)
    const status = await internalsOf(other.gateway).transport.status(deviceId)
    assert.is.not(status.state, 'linking', 'no new link was started on a linked device')
    assert.is(status.state, 'open', 'its session was resumed with the stored credentials')
    assert.equal(state.body, { conectado: true, qrcode: null })
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test.run()
