import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport } from '../../../adapters/transport-memory/index.ts'
import { createClient, OPERATION_ROUTES } from '../../../src/client.ts'
import { operationTable } from '../../../src/operations/table.ts'
import { inProcessCluster, registerAt, type ClusterMember } from '../../helpers/cluster-in-process.ts'
import { post } from '../../helpers/http.ts'
import { startGateway, waitFor } from '../../helpers/gateway.ts'
import { importsOf } from '../../structure/import-graph.ts'

const FRIEND = '5511988887777'
const HOLDER = 'x-zapgate-holder'
const texts = (network: MemoryNetwork) => network.inbox(FRIEND).map(entry => ('text' in entry ? entry.text : entry.type))

/** Three instances; heartbeats far apart, so no balancer scan moves the device while the test runs. */
async function clusterWithDevice() {
  const network = new MemoryNetwork()
  const members = await inProcessCluster(3, () => ({ transport: memoryTransport({ network }), instances: { heartbeatMs: 60_000, ttlMs: 120_000 } }))
  const [a] = members
  const owner = await registerAt(a!.url, 'owner@example.com')
  const stranger = await registerAt(a!.url, 'stranger@example.com')
  const added = await post(`${a!.url}/api/v2/qrcode`, { authkey: owner, setAppkey: 'loja' })
  assert.is(added.status, 200, added.text)
  await network.scan({ deviceId: added.body.id }, '5511944443333')
  await waitFor(
    async () => (await post(`${a!.url}/api/developer`, { authkey: owner, message: 'loja', checkDispositivo: 'true' })).body?.dispositivo?.conectado === true,
  )
  const holder = members.find(m => m.holds(added.body.id))!
  const entry = members.find(m => m !== holder)!
  assert.ok(holder && entry, 'one instance holds the device, another is the entry point')
  const forwards: string[] = []
  for (const member of members) member.gateway.events.on('forward', event => forwards.push(`${member.id} -> ${event.to}`))
  return { network, members, owner, stranger, holder, entry, forwards }
}

test("the client sends a device's first request through its base URL (one forward) and the next straight to the holder the answer named (no forward)", async () => {
  const { network, members, owner, holder, entry, forwards } = await clusterWithDevice()
  try {
    const client = createClient({ baseUrl: entry.url, authkey: owner })
    const first = await client.call('sendText', { appkey: 'loja', to: FRIEND, message: 'um' })
    assert.ok(first.ok, JSON.stringify(first.body))
    assert.is(first.url, entry.url)
    assert.equal(forwards, [`${entry.id} -> ${holder.id}`])
    assert.is(client.urlFor('loja'), holder.url, 'the relayed answer named the holder')

    const second = await client.call('sendText', { appkey: 'loja', to: FRIEND, message: 'dois' })
    assert.ok(second.ok, JSON.stringify(second.body))
    assert.is(second.url, holder.url)
    assert.match(second.body.status === 200 ? (second.body.id ?? '') : '', /^3EB0/)
    assert.equal(forwards.length, 1, 'the second send was not forwarded')
    assert.equal(texts(network), ['um', 'dois'])

    // Another device reference (or another caller key) is routed on its own: it starts at the base URL.
    assert.is(client.urlFor('outra'), entry.url)
    assert.is(client.urlFor('loja', 'another-key'), entry.url)
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test("the holder hint is on the answers of the device's owner only: never on a 401 or a 404, wherever the request lands", async () => {
  const { members, owner, stranger, holder, entry } = await clusterWithDevice()
  try {
    for (const member of [entry, holder]) {
      const own = await post(`${member.url}/api/create-message`, { authkey: owner, appkey: 'loja', to: FRIEND, message: 'oi' })
      assert.is(own.status, 200, own.text)
      assert.is(own.headers.get(HOLDER), holder.url, `the owner's answer through ${member === holder ? 'the holder' : 'another instance'}`)
      const status = await post(`${member.url}/api/developer`, { authkey: owner, message: 'loja', checkDispositivo: 'true' })
      assert.is(status.headers.get(HOLDER), holder.url, 'a device status names the holder too')

      const wrongKey = await post(`${member.url}/api/create-message`, { authkey: 'not-a-key-of-anyone', appkey: 'loja', to: FRIEND, message: 'oi' })
      assert.equal([wrongKey.status, wrongKey.headers.get(HOLDER)], [401, null])
      const otherAccount = await post(`${member.url}/api/create-message`, { authkey: stranger, appkey: 'loja', to: FRIEND, message: 'oi' })
      assert.equal([otherAccount.status, otherAccount.headers.get(HOLDER)], [404, null])
      const otherStatus = await post(`${member.url}/api/developer`, { authkey: stranger, message: 'loja', checkDispositivo: 'true' })
      assert.equal([otherStatus.status, otherStatus.headers.get(HOLDER)], [404, null])
    }
    // A not-found of the owner's own request, after the device was found (an unknown group), names no holder either.
    const noGroup = await post(`${holder.url}/api/groups`, { authkey: owner, appkey: 'loja', message: 'false', infoConvite: '120363000000000000@g.us' })
    assert.equal([noGroup.status, noGroup.headers.get(HOLDER)], [404, null], noGroup.text)
    // A client of the stranger learns nothing to route by.
    const client = createClient({ baseUrl: entry.url, authkey: stranger })
    const refused = await client.call('sendText', { appkey: 'loja', to: FRIEND, message: 'oi' })
    assert.equal([refused.ok, refused.httpStatus, client.urlFor('loja')], [false, 404, entry.url])
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test('when the remembered holder stops, the client goes back to its base URL and the send succeeds once the device has moved', async () => {
  const { network, members, owner, holder, entry } = await clusterWithDevice()
  const running: ClusterMember[] = [...members]
  try {
    const client = createClient({ baseUrl: entry.url, authkey: owner })
    assert.ok((await client.call('sendText', { appkey: 'loja', to: FRIEND, message: 'um' })).ok)
    assert.is(client.urlFor('loja'), holder.url)
    await holder.stop()
    running.splice(running.indexOf(holder), 1)

    // The holder is gone: the connection is refused (the request then goes to the base URL at once) or
    // breaks off (the call fails, as it may have been sent); either way the client forgets the holder.
    const failures: string[] = []
    let last: Awaited<ReturnType<typeof client.call<'sendText'>>> | undefined
    await waitFor(async () => {
      try {
        last = await client.call('sendText', { appkey: 'loja', to: FRIEND, message: 'depois' })
      } catch (err) {
        failures.push(String(err))
        assert.is(client.urlFor('loja'), entry.url, 'a network error of the remembered holder makes the client forget it')
        return false
      }
      return last.ok
    })
    assert.ok(failures.length <= 1, `at most one failed call: ${failures}`)
    assert.is(last!.url, entry.url, 'the send that succeeded went to the base URL')
    const mover = running.find(m => m.url === client.urlFor('loja'))
    assert.ok(mover && mover !== holder, "the answer named the device's new holder")
    assert.equal(texts(network), ['um', 'depois'])
  } finally {
    for (const member of running) await member.stop().catch(() => {})
  }
})

test('a gateway outside cluster mode sends no holder hint, and its client keeps using the base URL', async () => {
  const t = await startGateway()
  try {
    const registered = await t.post('/api/auth', {
      auth: 'registrar',
      nome: 'Ana',
      email: 'ana@example.com',
      senha: 's3nha-forte',
      telefone: '+5511999990000',
      plano: '1',
    })
    const authkey = registered.body.data.authkey as string
    const added = await t.post('/api/developer', { authkey, message: 'loja', conecteQR: 'true' })
    assert.is(added.status, 200, added.text)
    assert.is(added.headers.get(HOLDER), null)
    await t.network.scan({ deviceId: added.body.id }, '5511944443333')
    await t.network.settled()
    const client = createClient({ baseUrl: t.url, authkey })
    const sent = await client.call('sendText', { appkey: 'loja', to: FRIEND, message: 'oi' })
    assert.ok(sent.ok, JSON.stringify(sent.body))
    assert.is(client.urlFor('loja'), t.url.replace(/\/+$/, ''))
  } finally {
    await t.stop()
  }
})

test("an answer that is not JSON (a proxy's 413 or 502 page) resolves with its HTTP status, not a parse error, and forgets the holder", async () => {
  const { createServer } = await import('node:http')
  const serve = (answer: (res: import('node:http').ServerResponse) => void) =>
    new Promise<{ url: string; close(): void }>(resolve => {
      const server = createServer((req, res) => req.resume().on('end', () => answer(res))).listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number }
        resolve({ url: `http://127.0.0.1:${port}`, close: () => (server.closeAllConnections(), server.close()) })
      })
    })
  const page = (status: number) => (res: import('node:http').ServerResponse) =>
    res.writeHead(status, { 'content-type': 'text/html' }).end(`<html>${status}</html>`)
  const holder = await serve(page(502))
  const base = await serve(res => res.writeHead(200, { 'content-type': 'application/json', [HOLDER]: holder.url }).end('{"status":200,"message":"ok"}'))
  const proxy = await serve(page(413))
  try {
    const client = createClient({ baseUrl: base.url, authkey: 'k' })
    assert.ok((await client.call('sendText', { appkey: 'loja', to: FRIEND, message: 'um' })).ok)
    assert.is(client.urlFor('loja'), holder.url)
    const failed = await client.call('sendText', { appkey: 'loja', to: FRIEND, message: 'dois' })
    assert.equal([failed.ok, failed.httpStatus, failed.body.status, failed.url], [false, 502, 502, holder.url])
    assert.is(client.urlFor('loja'), base.url, 'the holder is forgotten')
    const tooLarge = await createClient({ baseUrl: proxy.url, authkey: 'k' }).call('sendMedia', { appkey: 'loja', to: FRIEND, file: 'aGVsbG8=' })
    assert.equal([tooLarge.ok, tooLarge.httpStatus, tooLarge.body.status], [false, 413, 413])
  } finally {
    for (const server of [holder, base, proxy]) server.close()
  }
})

test('the client posts each operation to the path and device field of the operation table, and loads no gateway code', () => {
  const fromTable = Object.fromEntries(
    operationTable.flatMap(entry =>
      [...entry.operations, ...('fallback' in entry ? [entry.fallback] : [])].map(operation => {
        const device = 'device' in operation && operation.device ? (operation.device as { ref: string }).ref : undefined
        return [operation.name, device ? { path: entry.path, device } : { path: entry.path }]
      }),
    ),
  )
  assert.equal(OPERATION_ROUTES, fromTable)
  const root = new URL('../../..', import.meta.url).pathname
  const runtime = importsOf(root, 'src/client-api.ts').filter(edge => !edge.typeOnly)
  assert.equal(runtime, [], 'zapgate/client imports types only besides its own file')
})

test.run()
