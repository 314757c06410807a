import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import Koa from 'koa'
import Router from '@koa/router'
import bodyParser from 'koa-bodyparser'
import { gzipSync } from 'node:zlib'
import { createGateway, type Gateway, type GatewayOptions } from '../../src/index.ts'
import { MemoryNetwork, memoryTransport } from '../../adapters/transport-memory/index.ts'
import { listen, post, request } from '../helpers/http.ts'
import { waitFor } from '../helpers/gateway.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { internalsOf } from '../../src/internals.ts'

/**
 * The gateway embedded in a host's own Koa app, as hosts mount it: each case a real Koa app on a
 * local port, the gateway under a prefix beside the host's own routes and middleware.
 */
const test = suite<{ stops: (() => Promise<unknown>)[] }>('a host app embedding the gateway')
test.before.each(ctx => {
  ctx.stops = []
})
test.after.each(async ctx => {
  for (const stop of ctx.stops.reverse()) await stop()
})

let emails = 0
const registration = () => ({ auth: 'registrar', nome: 'Host', email: `host${++emails}@example.com`, senha: 'segredo1', telefone: '5511912345678', plano: '1' })

/** A gateway on a fresh simulated network, closed after the case. */
async function gatewayFor(ctx: { stops: (() => Promise<unknown>)[] }, options: GatewayOptions = {}): Promise<Gateway> {
  const gateway = await createGateway({ transport: memoryTransport({ network: new MemoryNetwork() }), ...options })
  ctx.stops.push(() => gateway.close())
  return gateway
}

/** The host app `build` makes, listening on a free port (stopped before its gateways close). */
async function hostApp(ctx: { stops: (() => Promise<unknown>)[] }, build: (app: Koa) => void): Promise<string> {
  const app = new Koa()
  build(app)
  const server = await listen(app)
  ctx.stops.push(() => server.stop())
  return server.url
}

test("router.use(prefix, gateway.routes()) serves the gateway under the prefix, as the router's own routes() does", async ctx => {
  const gateway = await gatewayFor(ctx)
  for (const mount of ['use', 'prefix'] as const) {
    const url = await hostApp(ctx, app => {
      const host = mount === 'use' ? new Router() : new Router({ prefix: '/zap' })
      if (mount === 'use') host.use('/zap', gateway.routes())
      else host.use(gateway.routes())
      host.get('/mine', c => void (c.body = { mine: true }))
      app.use(host.routes()).use(host.allowedMethods())
    })
    const registered = await post(`${url}/zap/api/auth`, registration())
    assert.is(registered.status, 200, `${mount}: ${registered.text}`)
    const device = await post(`${url}/zap/api/v2/qrcode`, { authkey: registered.body.data.authkey, setAppkey: 'loja' })
    assert.match(device.body.link, new RegExp(`^${url}/zap/qr/`), 'the share link carries the prefix')
    assert.is((await request(device.body.link)).status, 200)
    assert.equal((await request(`${url}/zap/openapi.json`)).body.servers, [{ url: `${url}/zap` }])
    assert.is((await request(`${url}/zap/api/auth`)).status, 405, "a wrong method: the host router's allowedMethods()")
    assert.equal((await request(`${url}${mount === 'use' ? '' : '/zap'}/mine`)).body, { mine: true }, "the host's own route")
    assert.is((await request(`${url}/api/auth`, { method: 'POST' })).status, 404, 'nothing outside the prefix')
  }
})

test("a host parser that read the body first: the gateway's bodyLimit still holds (413), declared, chunked or compressed", async ctx => {
  const network = new MemoryNetwork()
  const gateway = await gatewayFor(ctx, { transport: memoryTransport({ network }), bodyLimit: '64kb' })
  const url = await hostApp(ctx, app => {
    app.use(bodyParser({ jsonLimit: '20mb', formLimit: '20mb' }))
    const host = new Router()
    host.use('/zap', gateway.router.routes(), gateway.router.allowedMethods())
    app.use(host.routes())
  })
  const authkey = (await post(`${url}/zap/api/auth`, registration())).body.data.authkey
  const device = await post(`${url}/zap/api/v2/qrcode`, { authkey, setAppkey: 'loja' })
  await network.scan({ deviceId: device.body.id }, '5511912340000')
  await network.settled()
  const send = { appkey: 'loja', authkey, to: '5511988880002', file: Buffer.alloc(96 * 1024, 7).toString('base64'), message: 'dados.bin' }
  const tooLarge = { status: 413, message: 'Corpo da requisição grande demais.' }
  assert.equal((await post(`${url}/zap/api/create-message`, send)).body, tooLarge, 'JSON')
  assert.equal((await post(`${url}/zap/api/create-message`, send, 'form')).body, tooLarge, 'a form')
  const json = JSON.stringify(send)
  const chunked = new ReadableStream({ start: c => (c.enqueue(new TextEncoder().encode(json)), c.close()) })
  const init = { method: 'POST', headers: { 'content-type': 'application/json' }, duplex: 'half' } as RequestInit
  assert.equal((await request(`${url}/zap/api/create-message`, { ...init, body: chunked })).body, tooLarge, 'chunked')
  const gzip = { ...init, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync(json) }
  assert.equal((await request(`${url}/zap/api/create-message`, gzip)).body, tooLarge, 'gzip: counted decoded')
  const small = await post(`${url}/zap/api/create-message`, { ...send, file: Buffer.alloc(16 * 1024, 7).toString('base64') })
  assert.equal([small.status, small.body.message], [200, 'Arquivo enviado.'])
  assert.is(network.inbox('5511988880002').length, 1, 'only the one within the limit was sent')
})

test('cluster mode under a prefix behind a host parser: links and holder hints carry the prefix; a forwarded upload needs the parser to take the forwarded size', async ctx => {
  /** Two instances on one store, each in a host app (error handler, koa-bodyparser with `limit`, the gateway under /zap); an upload sent through the one that does not hold the device. */
  const uploadThroughOther = async (limit: string) => {
    const [network, store] = [new MemoryNetwork(), memoryStorage()]
    const members: { url: string; holds(id: string): boolean }[] = []
    for (const storage of [store, store.connectAgain()]) {
      let routes: Koa.Middleware = (_c, next) => next()
      const url = await hostApp(ctx, app => {
        app.use(async (c, next) => next().catch((err: { status?: number }) => ((c.status = err.status ?? 500), (c.body = { host: true }))))
        app.use(bodyParser({ jsonLimit: limit, formLimit: limit }))
        app.use((c, next) => routes(c, next))
      })
      const cluster = { secret: 'a cluster secret of enough length', advertiseUrl: `${url}/zap` }
      const gateway = await gatewayFor(ctx, { storage, transport: memoryTransport({ network }), bodyLimit: '256kb', cluster })
      routes = new Router().use('/zap', gateway.routes()).routes() as unknown as Koa.Middleware
      const leases = (internalsOf(gateway) as { leases: { holds(id: string): boolean } }).leases
      members.push({ url, holds: id => leases.holds(id) })
    }
    const authkey = (await post(`${members[0]!.url}/zap/api/auth`, registration())).body.data.authkey
    const added = await post(`${members[0]!.url}/zap/api/v2/qrcode`, { authkey, setAppkey: 'loja' })
    assert.match(added.body.link, new RegExp(`^${members[0]!.url}/zap/qr/`))
    await network.scan({ deviceId: added.body.id }, '5511944443333')
    const status = () => post(`${members[1]!.url}/zap/api/developer`, { authkey, message: 'loja', checkDispositivo: 'true' })
    await waitFor(async () => (await status()).body?.dispositivo?.conectado === true)
    const [holder, other] = members[0]!.holds(added.body.id) ? members : [members[1]!, members[0]!]
    assert.is((await status()).headers.get('x-zapgate-holder'), `${holder!.url}/zap`, 'the holder hint carries the prefix')
    const file = new File([Buffer.alloc(200 * 1024, 7)], 'dados.bin')
    return post(`${other!.url}/zap/api/create-message`, { appkey: 'loja', authkey, to: '5511988880002', message: 'dados.bin', file }, 'multipart')
  }
  // The upload (200 KiB, within bodyLimit) travels to the holder as base64 JSON: past a parser limit of bodyLimit, the host's own 413.
  assert.equal(await uploadThroughOther('256kb').then(a => [a.status, a.body]), [413, { host: true }])
  // docs/scaling.md: a host parser in front of a cluster member takes twice bodyLimit plus 64 KiB.
  assert.equal(await uploadThroughOther(`${2 * 256 + 64}kb`).then(a => [a.status, a.body.message]), [200, 'Arquivo enviado.'])
})

test.run()
