import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport } from '../../../adapters/transport-memory/index.ts'
import type { GatewayOptions } from '../../../src/index.ts'
import { forwardOperation } from '../../../src/http/forwarding/send.ts'
import { inProcessCluster, registerAt } from '../../helpers/cluster-in-process.ts'
import { post, request } from '../../helpers/http.ts'
import { restartedHolder } from '../../helpers/restarted-holder.ts'
import { waitFor } from '../../helpers/gateway.ts'

const FRIEND = '5511988887777'

/** Whether the gateway at `url` documents `answer` (its exact body) as an answer of `operation` on `path`. */
async function documents(url: string, path: string, operation: string, answer: { status: number; body: unknown }): Promise<boolean> {
  const document = (await request(`${url}/openapi.json`)).body
  const examples = Object.values(document.paths[path].post.responses[answer.status]?.content['application/json'].examples ?? {}) as {
    summary: string
    value: unknown
  }[]
  return examples.some(example => JSON.stringify(example.value) === JSON.stringify(answer.body) && example.summary.includes(operation))
}

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
    await waitFor(
      async () => (await post(`${a!.url}/api/developer`, { authkey: owner, message: 'loja', checkDispositivo: 'true' })).body?.dispositivo?.conectado === true,
    )
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
    assert.equal(
      network.inbox(FRIEND).map(entry => ('text' in entry ? entry.text : entry.type)),
      ['oi'],
    )
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test('a forwarded request that finds its device held by yet another instance is 503 with Retry-After, and is not forwarded again', async () => {
  const network = new MemoryNetwork()
  const members = await inProcessCluster(2, () => ({ transport: memoryTransport({ network }) }))
  try {
    const [a] = members
    const authkey = await registerAt(a!.url, 'moved@example.com')
    const added = await post(`${a!.url}/api/v2/qrcode`, { authkey, setAppkey: 'loja' })
    assert.is(added.status, 200, added.text)
    const other = members.find(m => !m.holds(added.body.id))!
    assert.ok(other && members.some(m => m.holds(added.body.id)), 'one instance holds the device, the other not')
    const forwards: unknown[] = []
    other.gateway.events.on('forward', event => forwards.push(event))
    // As an instance that believed `other` held the device would forward it.
    const fields = { authkey, appkey: 'loja', to: FRIEND, message: 'oi' }
    const answer = await forwardOperation({
      baseUrl: other.url,
      path: '/api/create-message',
      fields,
      secret: 'a cluster secret of enough length',
      from: 'instance-that-forwarded',
      to: other.id,
    })
    assert.equal(
      [answer.status, (answer.body as { message?: string }).message],
      [503, 'O dispositivo está mudando de instância. Tente novamente em instantes.'],
    )
    assert.ok(answer.headers['retry-after'], 'Retry-After is set')
    assert.ok(await documents(other.url, '/api/create-message', 'sendText', answer), 'the document lists it for sendText')
    assert.ok(answer.notHolder, 'marked as refused by an instance that does not hold the device (the forwarder may ask the store again)')
    assert.equal(forwards, [])
    assert.equal(network.inbox(FRIEND), [])
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test('a link refused because the instance is full (cluster.maxDevices) answers 503 and leaves no device behind', async () => {
  const network = new MemoryNetwork()
  const members = await inProcessCluster(1, () => ({ transport: memoryTransport({ network }), cluster: { maxDevices: 1 } as GatewayOptions['cluster'] }))
  try {
    const [a] = members
    const authkey = await registerAt(a!.url, 'full@example.com')
    const first = await post(`${a!.url}/api/v2/qrcode`, { authkey, setAppkey: 'um' })
    assert.is(first.status, 200, first.text)
    const second = await post(`${a!.url}/api/developer`, { authkey, message: 'dois', conecteQR: 'true' })
    assert.equal([second.status, second.body.message], [503, 'Esta instância atingiu o limite de dispositivos. Tente novamente em instantes.'])
    assert.is(second.headers.get('retry-after'), '30', 'the Retry-After docs/limits.md and the error table give')
    assert.ok(await documents(a!.url, '/api/developer', 'addDevice', second), 'the document lists it for addDevice')
    const status = await post(`${a!.url}/api/developer`, { authkey, message: 'dois', checkDispositivo: 'true' })
    assert.equal([status.status, status.body.message], [404, 'Nenhum dispositivo encontrado.'])
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test("a holder restarted at the same URL (a new instance there, the store not yet moved on): the client gets 503 with Retry-After, not the new process's 403", async () => {
  const { network, authkey, atOther, restart, stop } = await restartedHolder('restart@example.com')
  try {
    restart()
    const sent = await post(`${atOther.url}/api/create-message`, { authkey, appkey: 'loja', to: FRIEND, message: 'oi' })
    assert.equal([sent.status, sent.body.message], [503, 'O dispositivo está mudando de instância. Tente novamente em instantes.'])
    assert.ok(sent.headers.get('retry-after'), 'Retry-After is set')
    assert.equal(network.inbox(FRIEND), [])
  } finally {
    await stop()
  }
})

test.run()
