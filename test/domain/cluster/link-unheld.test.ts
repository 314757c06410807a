import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport } from '../../../adapters/transport-memory/index.ts'
import { internalsOf } from '../../../src/internals.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { inProcessCluster, registerAt } from '../../helpers/cluster-in-process.ts'
import { post } from '../../helpers/http.ts'

// Operations 3 and 4 on a linked device nobody holds (its holder left): the instance taking it opens its session with its credentials and answers 409, never starting a new link.
for (const [name, path, body] of [
  ['addDevice (conecteQR)', '/api/developer', { message: 'loja', conecteQR: 'true' }],
  ['generateQrCode (pairing code)', '/api/v2/qrcode', { setAppkey: 'loja', phone: '5511944443333' }],
] as const) {
  test(`${name} on a linked device nobody holds resumes its session, never a new link`, async () => {
    const network = new MemoryNetwork()
    // Heartbeats far apart: no balancer scan takes the device before the request does.
    const members = await inProcessCluster(2, () => ({ transport: memoryTransport({ network }), instances: { heartbeatMs: 60_000, ttlMs: 120_000 } }))
    try {
      const authkey = await registerAt(members[0]!.url, 'link-unheld@example.com')
      const made = await post(`${members[0]!.url}/api/developer`, { authkey, message: 'loja', conecteQR: 'true' })
      assert.is(made.status, 200, made.text)
      const deviceId: string = made.body.id
      await network.scan({ deviceId }, '5511944443333')
      await waitFor(() => members.some(m => m.holds(deviceId)))
      const holder = members.find(m => m.holds(deviceId))!
      const check = { authkey, message: 'loja', checkDispositivo: 'true' }
      await waitFor(async () => (await post(`${holder.url}/api/developer`, check)).body?.dispositivo?.conectado === true)
      const other = members.find(m => m !== holder)!
      await holder.stop()
      members.splice(members.indexOf(holder), 1)

      const res = await post(`${other.url}${path}`, { authkey, ...body })
      const status = await internalsOf(other.gateway).transport.status(deviceId)
      assert.is.not(status.state, 'linking', `no new link was started on a linked device (answer ${res.status} ${res.body?.message})`)
      assert.is(status.state, 'open', 'its session was resumed with the stored credentials')
      assert.is(res.status, 409, res.text)
    } finally {
      for (const member of members) await member.stop().catch(() => {})
    }
  })
}

test.run()
