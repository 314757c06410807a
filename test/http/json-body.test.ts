import http from 'node:http'
import net from 'node:net'
import Koa from 'koa'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createGateway } from '../../src/index.ts'
import { MemoryNetwork, memoryTransport } from '../../adapters/transport-memory/index.ts'
import { gatewayWithDevice, type TestGateway } from '../helpers/gateway.ts'
import { listen, request } from '../helpers/http.ts'

// Plain JSON bodies are read by the gateway's own reader (src/http/json-body.ts); every other body
// by koa-bodyparser. `Content-Type: application/vnd.api+json` (also JSON to the gateway) sends the
// very same bytes down koa-bodyparser's path, so the two readers can be held to the same answers.

type Ctx = { t: TestGateway; authkey: string }
const json = suite<Ctx>('plain JSON body reader')
json.before(async ctx => {
  Object.assign(ctx, await gatewayWithDevice({ bodyLimit: '1kb' }))
})
json.after(ctx => ctx.t.stop())

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })

/** POST raw bytes over one kept-alive connection; `chunked` leaves Content-Length out. */
function send(url: string, body: Buffer, headers: Record<string, string> = {}, chunked = false): Promise<{ status: number; body: any; socket: unknown }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/api/developer`,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': String(body.length) }), ...headers } },
      res => {
        const chunks: Buffer[] = []
        res.on('data', chunk => chunks.push(chunk))
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')), socket: req.socket }))
      },
    )
    req.on('error', reject)
    if (chunked) for (let i = 0; i < body.length; i += 300) req.write(body.subarray(i, i + 300))
    else req.write(body)
    req.end()
  })
}

json('answers every body as koa-bodyparser does', async ({ t, authkey }) => {
  const valid = JSON.stringify({ authkey, message: 'loja', checkDispositivo: 'true' })
  const bodies = [
    valid,
    `\ufeff${valid}`,
    JSON.stringify({ authkey, message: 'ghost', checkDispositivo: 'true' }),
    `  ${valid}\n`,
    '{bad',
    '{"a":1}}',
    '',
    '   ',
    '[]',
    'null',
    '"texto"',
    '{"__proto__":{"checkDispositivo":"true"}}',
    `{"constructor":{"prototype":{"x":1}},"authkey":"${authkey}","message":"loja"}`,
    JSON.stringify({ authkey, message: 'l\u0000oja', checkDispositivo: 'true' }),
  ].map(text => Buffer.from(text, 'utf8'))
  bodies.push(Buffer.concat([Buffer.from('{"authkey":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('","message":"loja"}')]))
  for (const body of bodies) {
    for (const chunked of [false, true]) {
      const ours = await send(t.url, body, {}, chunked)
      const theirs = await send(t.url, body, { 'content-type': 'application/vnd.api+json' }, chunked)
      assert.equal(ours.body, theirs.body, `${JSON.stringify(body.toString('utf8'))} chunked ${chunked}`)
      assert.is(ours.status, theirs.status)
      assert.ok(ours.status < 500)
    }
  }
  assert.is((await send(t.url, bodies[1]!)).status, 200, 'a BOM is skipped')
})

json('a body over the limit is 413, declared or streamed, and the connection carries on', async ({ t, authkey }) => {
  const big = Buffer.from(JSON.stringify({ authkey, message: 'x'.repeat(2000) }))
  const small = Buffer.from(JSON.stringify({ authkey, message: 'loja', checkDispositivo: 'true' }))
  for (const chunked of [false, true]) {
    const refused = await send(t.url, big, {}, chunked)
    assert.is(refused.status, 413)
    assert.equal(refused.body, { status: 413, message: 'Corpo da requisição grande demais.' })
    const next = await send(t.url, small)
    assert.is(next.status, 200, 'the next request on the connection is answered')
  }
})

json('a client that goes away mid-body leaves the gateway answering others', async ({ t, authkey }) => {
  const { port } = new URL(t.url)
  for (let i = 0; i < 20; i++) {
    const socket = net.connect(Number(port), '127.0.0.1')
    await new Promise(resolve => socket.once('connect', resolve))
    socket.write(`POST /api/developer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"authkey":"`)
    await new Promise(resolve => setTimeout(resolve, 5))
    socket.destroy()
  }
  const answer = await send(t.url, Buffer.from(JSON.stringify({ authkey, message: 'loja', checkDispositivo: 'true' })))
  assert.is(answer.status, 200)
})

json('the parsed body is where a host app expects it (ctx.request.body)', async () => {
  const gateway = await createGateway({ transport: memoryTransport({ network: new MemoryNetwork() }) })
  const app = new Koa()
  const seen: unknown[] = []
  app.use(async (ctx, next) => {
    await next()
    seen.push((ctx.request as { body?: unknown }).body)
  })
  app.use(gateway.routes())
  const server = await listen(app)
  try {
    const answer = await send(server.url, Buffer.from('{"authkey":"nope","message":"loja"}'))
    assert.is(answer.status, 401)
    assert.equal(seen, [{ authkey: 'nope', message: 'loja' }])
  } finally {
    await server.stop()
    await gateway.close()
  }
})

/** `work`, or a failure naming `what` when it has not settled within `ms`. */
function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  const late = new Promise<T>((_, reject) => {
    setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms).unref()
  })
  return Promise.race([work, late])
}

json('a body the host already read to its end is answered 400, never left pending (JSON and multipart)', async () => {
  const gateway = await createGateway({ transport: memoryTransport({ network: new MemoryNetwork() }) })
  const app = new Koa()
  // A host that reads the raw bytes itself (say, to check a signature) and leaves ctx.request.body unset.
  app.use(async (ctx, next) => {
    for await (const _ of ctx.req) void _
    await next()
  })
  app.use(gateway.routes())
  const server = await listen(app)
  try {
    const asJson = await within(
      3000,
      'JSON',
      request(`${server.url}/api/developer`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"authkey":"k","message":"loja","checkDispositivo":"true"}',
      }),
    )
    assert.is(asJson.status, 400)
    assert.equal(asJson.body, { status: 400, message: 'Corpo da requisição inválido.' })
    const form = new FormData()
    form.append('authkey', 'k')
    const asMultipart = await within(3000, 'multipart', request(`${server.url}/api/developer`, { method: 'POST', body: form }))
    assert.is(asMultipart.status, 400)
    assert.equal(asMultipart.body, { status: 400, message: 'Corpo da requisição inválido.' })
  } finally {
    await server.stop()
    await gateway.close()
  }
})

/** Bodies that stop short of the 500 bytes their request announces. */
const PARTIAL_BODIES = [
  { type: 'application/json', body: '{"authkey":"' },
  { type: 'multipart/form-data; boundary=x', body: '--x\r\nContent-Disposition: form-data; name="authkey"\r\n\r\nk' },
]

/** Open a connection and send a POST whose body stops short; resolves with the socket. */
async function partialRequest(port: number, { type, body }: { type: string; body: string }): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1')
  await new Promise(resolve => socket.once('connect', resolve))
  socket.write(`POST /api/developer HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: 500\r\n\r\n${body}`)
  return socket
}

/** Wait until `check()` holds (a failure naming `what` after 3 s). */
function until(what: string, check: () => boolean): Promise<void> {
  return within(
    3000,
    what,
    (async () => {
      while (!check()) await new Promise(resolve => setTimeout(resolve, 2))
    })(),
  )
}

// The client leaves while a host middleware still awaits something before the gateway (an auth
// lookup, a limiter), or once the gateway is reading the body: either way the request must end.
for (const [when, hostDelayMs] of [
  ['before the gateway reads its body', 80],
  ['after the gateway started reading', 0],
] as const) {
  json(`a client gone mid-body ${when} ends the request, JSON and multipart (host middleware after it returns)`, async () => {
    const gateway = await createGateway({ transport: memoryTransport({ network: new MemoryNetwork() }) })
    const app = new Koa()
    app.silent = true
    const finished: string[] = []
    let arrived = 0
    app.use(async (ctx, next) => {
      arrived++
      if (hostDelayMs) await new Promise(resolve => setTimeout(resolve, hostDelayMs))
      await next()
      finished.push(String(ctx.status))
    })
    app.use(gateway.routes())
    const server = await listen(app)
    try {
      const port = Number(new URL(server.url).port)
      for (const [i, client] of PARTIAL_BODIES.entries()) {
        const socket = await partialRequest(port, client)
        await until('the request to reach the host middleware', () => arrived > i)
        await new Promise(resolve => setTimeout(resolve, 20))
        socket.destroy()
      }
      await until('the aborted requests to end', () => finished.length === PARTIAL_BODIES.length)
      assert.equal(finished, ['400', '400'])
    } finally {
      await server.stop()
      await gateway.close()
    }
  })
}

json('an operation request has the same router fields on ctx through routes() as through the router', async () => {
  const gateway = await createGateway({ transport: memoryTransport({ network: new MemoryNetwork() }) })
  const seen: Record<string, unknown>[] = []
  const app = (middleware: Koa.Middleware) => {
    const koa = new Koa()
    koa.use(async (ctx, next) => {
      ;(ctx as unknown as { params: object }).params = { tenant: 'acme' } // as an enclosing router would
      await next()
      const routed = ctx as unknown as Record<string, unknown>
      seen.push({
        route: routed._matchedRoute,
        routerPath: routed.routerPath,
        params: routed.params,
        requestParams: (ctx.request as unknown as Record<string, unknown>).params,
        captures: routed.captures,
        router: routed.router === gateway.router,
        status: ctx.status,
      })
    })
    return koa.use(middleware)
  }
  const direct = await listen(app(gateway.routes()))
  const viaRouter = await listen(app(gateway.router.routes() as unknown as Koa.Middleware))
  try {
    for (const server of [direct, viaRouter]) {
      const answer = await request(`${server.url}/api/create-message`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"authkey":"nope","appkey":"x","to":"5511999999999","message":"oi"}',
      })
      assert.is(answer.status, 401)
    }
    assert.equal(seen[0], {
      route: '/api/create-message',
      routerPath: '/api/create-message',
      params: { tenant: 'acme' },
      requestParams: { tenant: 'acme' },
      captures: [],
      router: true,
      status: 401,
    })
    assert.equal(seen[0], seen[1])
  } finally {
    await Promise.all([direct.stop(), viaRouter.stop()])
    await gateway.close()
  }
})

json.after(() => agent.destroy())
json.run()
