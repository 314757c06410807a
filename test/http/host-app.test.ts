import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import Koa from 'koa'
import Router from '@koa/router'
import bodyParser from 'koa-bodyparser'
import { gzipSync } from 'node:zlib'
import compose from 'koa-compose'
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

/** koa-mount's way: under `prefix` the path is taken off ctx.path (ctx.originalUrl keeps it), and put back for what runs after. */
function mounted(prefix: string, middleware: Koa.Middleware): Koa.Middleware {
  return async (ctx, next) => {
    const path = ctx.path
    if (path !== prefix && !path.startsWith(`${prefix}/`)) return next()
    ctx.path = path.slice(prefix.length) || '/'
    await middleware(ctx, async () => {
      ctx.path = path
      await next()
      ctx.path = path.slice(prefix.length) || '/'
    })
    ctx.path = path
  }
}

test("koa-mount style (the prefix taken off ctx.path): links, the OpenAPI server and the docs page carry it; wrong methods are the gateway's", async ctx => {
  const gateway = await gatewayFor(ctx)
  const url = await hostApp(ctx, app => app.use(mounted('/zap', gateway.routes())).use(c => void (c.path === '/elsewhere' && (c.body = { host: c.path }))))
  const authkey = (await post(`${url}/zap/api/auth`, registration())).body.data.authkey
  const device = await post(`${url}/zap/api/v2/qrcode?x=1`, { authkey, setAppkey: 'loja' })
  assert.match(device.body.link, new RegExp(`^${url}/zap/qr/`))
  assert.is((await request(`${device.body.link}/state`)).body.conectado, false)
  assert.equal((await request(`${url}/zap/openapi.json`)).body.servers, [{ url: `${url}/zap` }])
  assert.match((await request(`${url}/zap/docs`)).text, /"\/zap\/openapi\.json"/)
  assert.equal((await request(`${url}/zap/api/auth`)).body, { status: 405, message: 'Método não permitido.' })
  assert.equal((await request(`${url}/elsewhere`)).body, { host: '/elsewhere' }, "the host's own")
})

test("the host's error handler, after-next rewriter, compression and CORS around the gateway: its answers unchanged", async ctx => {
  const gateway = await gatewayFor(ctx)
  const seen: unknown[] = []
  const url = await hostApp(ctx, app => {
    app.use(async (c, next) => next().catch(err => (seen.push(err), (c.status = 500), (c.body = { host: 'error' }))))
    app.use(async (c, next) => (await next(), c.status === 404 && c.body == null && (c.body = { host: 'not found' })))
    app.use(async (c, next) => {
      c.set('Access-Control-Allow-Origin', '*')
      if (c.method === 'OPTIONS') return void (c.status = 204)
      await next()
      // A compressor: the JSON answer gzipped when the client takes it.
      if (c.acceptsEncodings('gzip') === 'gzip' && c.body && typeof c.body === 'object' && !Buffer.isBuffer(c.body)) {
        const type = c.type
        c.body = gzipSync(JSON.stringify(c.body))
        c.type = type
        c.set('Content-Encoding', 'gzip')
      }
    })
    app.use(compose([new Router().use('/zap', gateway.routes()).routes() as unknown as Koa.Middleware]))
  })
  const registered = await post(`${url}/zap/api/auth`, registration())
  assert.equal(
    [registered.status, registered.body.message, registered.headers.get('access-control-allow-origin')],
    [200, 'Usuário registrado com sucesso.', '*'],
  )
  const refused = await post(`${url}/zap/api/v2/qrcode`, { authkey: 'wrong', setAppkey: 'loja' })
  assert.equal([refused.status, refused.headers.get('content-encoding')], [401, 'gzip'])
  assert.equal(refused.body, { status: 401, message: 'Authkey inválida ou não encontrada.' })
  assert.equal((await request(`${url}/zap/qr/nope/state`)).body, { status: 404, message: 'Link inválido, expirado ou excluído.' })
  assert.equal((await request(`${url}/zap/api/auth`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' })).body, {
    status: 400,
    message: 'JSON inválido.',
  })
  assert.is((await request(`${url}/zap/api/auth`, { method: 'OPTIONS' })).status, 204, "the host's preflight")
  assert.equal((await request(`${url}/nowhere`)).body, { host: 'not found' })
  assert.equal(seen, [], "no gateway error reached the host's handler")
})

test('X-Forwarded-Proto and -Host make the links only when the host trusts its proxy (app.proxy)', async ctx => {
  const gateway = await gatewayFor(ctx)
  for (const proxy of [false, true]) {
    const url = await hostApp(ctx, app => ((app.proxy = proxy), app.use(new Router().use('/zap', gateway.routes()).routes())))
    const headers = { 'content-type': 'application/json', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'gw.example.com' }
    const authkey = (await post(`${url}/zap/api/auth`, registration())).body.data.authkey
    const device = await request(`${url}/zap/api/v2/qrcode`, { method: 'POST', headers, body: JSON.stringify({ authkey, setAppkey: `loja-${proxy}` }) })
    const base = proxy ? 'https://gw.example.com/zap' : `${url}/zap`
    assert.ok(device.body.link.startsWith(`${base}/qr/`), `${proxy}: ${device.body.link}`)
    assert.equal((await request(`${url}/zap/openapi.json`, { headers })).body.servers, [{ url: base }])
  }
})

test("a host's own ctx.state.gateway (a payment gateway's, a tenant's name): the gateway serves beside it and leaves it as it was", async ctx => {
  const gateway = await gatewayFor(ctx)
  for (const own of ['tenant-a', { name: 'pix', status: 'pending' }]) {
    const after: unknown[] = []
    const url = await hostApp(ctx, app => {
      app.use(async (c, next) => ((c.state.gateway = typeof own === 'object' ? { ...own } : own), await next(), after.push(c.state.gateway)))
      app.use(new Router().use('/zap', gateway.routes()).routes())
    })
    const registered = await post(`${url}/zap/api/auth`, registration())
    assert.equal([registered.status, registered.body.message], [200, 'Usuário registrado com sucesso.'], JSON.stringify(own))
    const added = await post(`${url}/zap/api/v2/qrcode`, { authkey: registered.body.data.authkey, setAppkey: `loja-${after.length}` })
    assert.is(added.status, 200, JSON.stringify(own))
    assert.equal(after, [own, own], "the host's value, nothing of the gateway's in it")
  }
})

test('two gateways under two prefixes: their stores, events and metrics apart; one closed answers 503, the other and the host serve on', async ctx => {
  const [a, b] = [await gatewayFor(ctx, { metrics: true }), await gatewayFor(ctx, { metrics: true })]
  const routes = { a: [] as string[], b: [] as string[] }
  a.events.on('request', e => routes.a.push(e.route))
  b.events.on('request', e => routes.b.push(e.route))
  const url = await hostApp(ctx, app => {
    const host = new Router().use('/a', a.routes()).use('/b', b.routes())
    host.get('/mine', c => void (c.body = { mine: true }))
    app.use(host.routes())
  })
  const same = registration()
  const [inA, inB] = [await post(`${url}/a/api/auth`, same), await post(`${url}/b/api/auth`, same)]
  assert.equal([inA.status, inB.status], [200, 200], 'one email in each store')
  assert.is((await post(`${url}/b/api/v2/qrcode`, { authkey: inA.body.data.authkey, setAppkey: 'loja' })).status, 401, "A's key means nothing to B")
  assert.equal(routes, { a: ['/a/api/auth'], b: ['/b/api/auth', '/b/api/v2/qrcode'] })
  const count = async (prefix: string) => (await request(`${url}${prefix}/metrics`)).text.match(/^zapgate_http_requests_total\{.*$/gm)
  assert.equal(await count('/a'), ['zapgate_http_requests_total{route="/a/api/auth",operation="registerUser",status="200"} 1'])
  await a.close()
  for (const path of ['/a/api/auth', '/a/health', '/a/qr/x']) {
    const closed = path.includes('/api/') ? await post(`${url}${path}`, registration()) : await request(`${url}${path}`)
    assert.equal([closed.status, closed.body.status, closed.headers.get('retry-after')], [503, 503, '5'], path)
  }
  assert.is((await post(`${url}/b/api/auth`, registration())).status, 200)
  assert.equal((await request(`${url}/mine`)).body, { mine: true })
})

test.run()
