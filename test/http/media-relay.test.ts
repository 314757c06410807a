import { test } from 'uvu'
import * as assert from 'uvu/assert'
import Koa from 'koa'
import type { Middleware } from 'koa'
import { createGateway, type Gateway } from '../../src/index.ts'
import { MemoryNetwork, memoryTransport } from '../../adapters/transport-memory/index.ts'
import { internalsOf } from '../../src/internals.ts'
import type { MediaPayload } from '../../src/ports/transport.ts'
import { MEDIA_RELAY_HEADER } from '../../src/http/media-relay.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { listen, post, request } from '../helpers/http.ts'
import { startReceiver } from '../helpers/receiver.ts'
import { waitFor } from '../helpers/gateway.ts'

/** Two gateways of one cluster on one store and one simulated network, each served over real HTTP. */
async function twoInstances() {
  const network = new MemoryNetwork()
  const store = memoryStorage()
  const bytes = Buffer.from('%PDF-1.7 relayed document '.repeat(2000))
  const instances: { url: string; gateway: Gateway; closeServer(): Promise<void>; stop(): Promise<void> }[] = []
  for (const storage of [store, store.connectAgain()]) {
    // The server listens first: its address is the instance's advertised URL.
    let handler: Middleware = async (_ctx, next) => next()
    const app = new Koa()
    app.use((ctx, next) => handler(ctx, next))
    const server = await listen(app)
    const gateway = await createGateway({ storage, transport: memoryTransport({ network }), allowPrivateUrls: true, baseUrl: server.url, cluster: { secret: 'a cluster secret of enough length', advertiseUrl: server.url } })
    handler = gateway.routes()
    // Only the instance holding a device's session can fetch its media (as with Baileys).
    const internals = internalsOf(gateway) as { transport: { downloadMedia?: unknown }; leases: { holds(id: string): boolean } }
    internals.transport.downloadMedia = async (deviceId: string): Promise<MediaPayload | undefined> =>
      internals.leases.holds(deviceId) ? { data: bytes, mimetype: 'application/pdf', fileName: 'contrato.pdf' } : undefined
    instances.push({ url: server.url, gateway, closeServer: () => server.stop(), stop: async () => (await gateway.close(), await server.stop().catch(() => {})) })
  }
  return { network, bytes, instances }
}

test('a media link works through any instance of a cluster: the holder of the device fetches the bytes', async () => {
  const receiver = await startReceiver()
  const { network, bytes, instances } = await twoInstances()
  try {
    const [a] = instances
    const registered = await post(`${a!.url}/api/auth`, { auth: 'registrar', nome: 'Relay', email: 'relay@example.com', senha: 'senha-secreta', telefone: '+55 11 99999-0000', plano: '1' })
    const authkey = registered.body.data.authkey
    const added = await post(`${a!.url}/api/v2/qrcode`, { authkey, setAppkey: 'docs', webhook: receiver.url })
    assert.is(added.status, 200, added.text)
    await network.scan({ deviceId: added.body.id }, '5511944443333')
    await waitFor(async () => (await post(`${a!.url}/api/developer`, { authkey, message: 'docs', checkDispositivo: 'true' })).body?.dispositivo?.conectado === true)
    await network.sendFromPhone('5511900001111', '5511944443333', { type: 'document', fileName: 'contrato.pdf', mimetype: 'application/pdf' })
    await receiver.waitForHooks(1)
    const event = receiver.verified(added.body.webhookSecret)[0]
    const token = String(event.url).split('/media/')[1]
    assert.ok(token, event.url)

    const holder = instances.find(i => (internalsOf(i.gateway) as { leases: { holds(id: string): boolean } }).leases.holds(added.body.id))!
    const other = instances.find(i => i !== holder)!
    for (const instance of [holder, other]) {
      const download = await fetch(`${instance.url}/media/${token}`)
      assert.is(download.status, 200, instance === holder ? 'holder' : 'other instance')
      assert.is(download.headers.get('content-type'), 'application/pdf')
      assert.match(download.headers.get('content-disposition') ?? '', /contrato\.pdf/)
      assert.is(download.headers.get('x-content-type-options'), 'nosniff')
      assert.ok(Buffer.from(await download.arrayBuffer()).equals(bytes))
    }
    // A relayed request is answered where it lands, never relayed again: the other instance has no session.
    const relayed = await request(`${other.url}/media/${token}`, { headers: { [MEDIA_RELAY_HEADER]: 'someone' } })
    assert.is(relayed.status, 404)
    // A bad token is refused before any relay.
    assert.is((await request(`${other.url}/media/${token.slice(0, -3)}xyz`)).status, 404)

    // The holder unreachable while its lease still names it: 503 with Retry-After, for the client to try again.
    await holder.closeServer()
    const unreachable = await request(`${other.url}/media/${token}`)
    assert.is(unreachable.status, 503)
    assert.ok(unreachable.headers.get('retry-after'))
  } finally {
    for (const instance of instances) await instance.stop().catch(() => {})
    await receiver.stop()
  }
})

test.run()
