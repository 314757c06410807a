import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport } from '../../../adapters/transport-memory/index.ts'
import { inProcessCluster, registerAt } from '../../helpers/cluster-in-process.ts'
import { post } from '../../helpers/http.ts'
import { waitFor } from '../../helpers/gateway.ts'

const FRIEND = '5511988887777'

test('the caller is authenticated and its device found in its own account before a request goes to the holder: no forward for another account or an unknown key', async () => {
  const network = new MemoryNetwork()
  const members = await inProcessCluster(2, () => ({ transport: memoryTransport({ network }) }))
  try {
    const [a] = members
    const owner = await registerAt(a!.url, 'owner@example.com')
    const stranger = await registerAt(a!.url, 'stranger@example.com')
    const added = await post(`${a!.url}/api/v2/qrcode`, { authkey: owner, setAppkey: 'loja' })
    assert.is(added.status, 200, added.text)
    await network.scan({ deviceId: added.body.id }, '5511944443333')
    await waitFor(async () => (await post(`${a!.url}/api/developer`, { authkey: owner, message: 'loja', checkDispositivo: 'true' })).body?.dispositivo?.conectado === true)
    const other = members.find(m => !m.holds(added.body.id))!
    assert.ok(other, 'one instance holds the device, the other not')
    const forwards: unknown[] = []
    other.gateway.events.on('forward', event => forwards.push(event))

    // Another account names the device by its appkey, its name or its id: not found, on the instance called.
    const asStranger = await post(`${other.url}/api/create-message`, { authkey: stranger, appkey: 'loja', to: FRIEND, message: 'oi' })
    assert.equal([asStranger.status, asStranger.body.message], [404, 'Nenhum dispositivo encontrado.'])
    for (const ref of ['loja', added.body.id]) {
      const status = await post(`${other.url}/api/developer`, { authkey: stranger, message: ref, checkDispositivo: 'true' })
      assert.equal([status.status, status.body.message], [404, 'Nenhum dispositivo encontrado.'], ref)
    }
    // An unknown key is refused before anything about the device is asked.
    const unknown = await post(`${other.url}/api/create-message`, { authkey: 'not-a-key-of-anyone', appkey: 'loja', to: FRIEND, message: 'oi' })
    assert.equal([unknown.status, unknown.body.message], [401, 'validation.required'])
    assert.equal(forwards, [], 'nothing was forwarded')
    assert.equal(network.inbox(FRIEND), [])

    // The owner's request through the same instance goes to the holder and is sent once.
    const sent = await post(`${other.url}/api/create-message`, { authkey: owner, appkey: 'loja', to: FRIEND, message: 'oi' })
    assert.is(sent.status, 200, sent.text)
    assert.equal(forwards.length, 1)
    assert.equal(network.inbox(FRIEND).map(entry => ('text' in entry ? entry.text : entry.type)), ['oi'])
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test.run()
