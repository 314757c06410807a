import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport } from '../../../adapters/transport-memory/index.ts'
import { internalsOf } from '../../../src/internals.ts'
import { hashKey } from '../../../src/security/keys.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { inProcessCluster, registerAt } from '../../helpers/cluster-in-process.ts'
import { post, request } from '../../helpers/http.ts'

test('a share page polled through an instance that does not hold the device says "connected" once it connects, never "revoked"', async () => {
  const network = new MemoryNetwork()
  // A long record cache: what the other instance read before the connection is what it still has (the default keeps it 2 s).
  const members = await inProcessCluster(2, () => ({ transport: memoryTransport({ network }), cacheTtlMs: 60_000 }))
  try {
    const authkey = await registerAt(members[0]!.url, 'share-elsewhere@example.com')
    const shared = await post(`${members[0]!.url}/api/developer`, { authkey, message: 'loja', conecteQR: 'true' })
    assert.is(shared.status, 200, shared.text)
    const deviceId: string = shared.body.id
    const token = new URL(shared.body.link).pathname.split('/').pop()!
    await waitFor(() => members.some(m => m.holds(deviceId)))
    const holder = members.find(m => m.holds(deviceId))!
    const other = members.find(m => m !== holder)!

    // The page polls its state through the instance that does not hold the device (a balancer's choice): it shows the QR.
    const before = await request(`${other.url}/qr/${token}/state`)
    assert.is(before.status, 200, before.text)
    assert.is(before.body.conectado, false)

    // The phone scans it: the holder records the connection and spends the link.
    await network.scan({ deviceId }, '5511944443333')
    const storage = internalsOf(holder.gateway).storage
    await waitFor(async () => (await storage.get(`share-link-spent:${hashKey(token)}`)) === true)

    const after = await request(`${other.url}/qr/${token}/state`)
    assert.is(after.status, 200, `the page's next poll: ${after.status} ${after.text}`)
    assert.equal(after.body, { conectado: true, qrcode: null })
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test.run()
