import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import Koa from 'koa'
import { createGateway } from '../../src/index.ts'
import { memoryTransport } from '../../adapters/transport-memory/index.ts'
import { startGateway } from '../helpers/gateway.ts'
import { listen, request, type Answer } from '../helpers/http.ts'

/**
 * A wrong method on a gateway path is answered as every other error is (the spec: every answer a JSON
 * object with `status` and `message`): 405 with `Allow` for a method the router serves elsewhere, 501
 * for one it serves nowhere; OPTIONS still lists the methods. Through `gateway.routes()` and through
 * the router's own `routes()` and `allowedMethods()`.
 */
const test = suite('wrong methods on the gateway paths')

const NOT_ALLOWED = { status: 405, message: 'Método não permitido.' }
const NOT_IMPLEMENTED = { status: 501, message: 'Método não implementado.' }

function assertJson(answer: Answer, body: { status: number; message: string }, what: string): void {
  assert.equal([answer.status, answer.body], [body.status, body], `${what}: ${answer.text}`)
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/, what)
}

async function check(base: string): Promise<void> {
  const get = await request(`${base}/api/auth`)
  assertJson(get, NOT_ALLOWED, 'GET on a POST path')
  assert.is(get.headers.get('allow'), 'POST')
  const del = await request(`${base}/api/create-message`, { method: 'DELETE' })
  assertJson(del, NOT_ALLOWED, 'DELETE on a POST path')
  const post = await request(`${base}/health`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  assertJson(post, NOT_ALLOWED, 'POST on a GET path')
  assert.match(post.headers.get('allow') ?? '', /GET/)
  assertJson(await request(`${base}/api/auth`, { method: 'PROPFIND' }), NOT_IMPLEMENTED, 'a method no route has')
  const options = await request(`${base}/api/auth`, { method: 'OPTIONS' })
  assert.is(options.status, 200)
  assert.is(options.headers.get('allow'), 'POST')
}

test('gateway.routes(): 405 and 501 are JSON {status, message}', async () => {
  const t = await startGateway()
  try {
    await check(t.url)
  } finally {
    await t.stop()
  }
})

test("the router mounted with its own routes() and allowedMethods(): 405 and 501 are JSON too; the host's later answer is left as it is", async () => {
  const gateway = await createGateway({ transport: memoryTransport() })
  const app = new Koa()
  app.use(gateway.router.routes()).use(gateway.router.allowedMethods())
  app.use(ctx => {
    if (ctx.path === '/own') [ctx.status, ctx.body] = [405, 'own']
  })
  const server = await listen(app)
  try {
    await check(server.url)
    const own = await request(`${server.url}/own`, { method: 'POST' })
    assert.equal([own.status, own.text], [405, 'own'])
  } finally {
    await server.stop()
    await gateway.close()
  }
})

test.run()
