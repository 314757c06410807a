import assert from 'node:assert/strict'
import { suite } from 'uvu'
import Koa from 'koa'
import koaBodyParser from 'koa-bodyparser'
import { forwardOperation } from '../../../src/http/forwarding/send.ts'
import { forwardedBodyLimit } from '../../../src/http/forwarding/receive.ts'
import { silentLogger } from '../../../src/logger.ts'
import { requestState } from '../../../src/http/request-state.ts'
import { listen, post, request } from '../../helpers/http.ts'
import { SECRET, verifyForwardedRequests } from '../../helpers/forwarding.ts'

type Server = Awaited<ReturnType<typeof listen>>
type HostParser = 'none' | 'koa-bodyparser' | 'parsed-only'
const test = suite<{ servers: Server[] }>('receiving forwarded requests')

test.before.each(ctx => {
  ctx.servers = []
})
test.after.each(async ctx => {
  for (const server of ctx.servers) await server.stop()
})

const LIMIT = 16 * 1024

/**
 * A receiver: an optional host bodyparser, verifyForwardedRequests, then a handler that answers what
 * it got (the body the gateway would read, and the marks). `parsed-only` is a host parser that keeps
 * no raw text.
 */
async function receiver(ctx: { servers: Server[] }, parser: HostParser, httpStatus: 'mirror' | 'always200' = 'mirror'): Promise<string> {
  const app = new Koa()
  if (parser === 'koa-bodyparser') app.use(koaBodyParser({ jsonLimit: '1mb' }))
  if (parser === 'parsed-only')
    app.use(async (c, next) => {
      const chunks: Buffer[] = []
      for await (const chunk of c.req) chunks.push(chunk as Buffer)
      ;(c.request as { body?: unknown }).body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      await next()
    })
  app.use(verifyForwardedRequests(SECRET, { limitBytes: LIMIT, instanceId: 'holder', httpStatus, logger: silentLogger }))
  app.use(c => {
    c.body = {
      status: 200,
      message: 'ok',
      received: (c.request as { body?: unknown }).body ?? null,
      forwardedBy: requestState(c).forwardedFrom?.instanceId ?? null,
      from: requestState(c).forwardedFrom ?? null,
    }
  })
  const server = await listen(app)
  ctx.servers.push(server)
  return server.url
}

const FIELDS = {
  appkey: 'k',
  authkey: 'a',
  to: '5511988880002',
  message: 'olá "mundo" \\ ✓ \u0001',
  extra: { 2: 'b', 1: 'a', z: [1, 2.5, true, null] },
  count: 3,
}

test('a verified request reaches the routes with its fields and marks, whether or not a host bodyparser read it first', async ctx => {
  for (const parser of ['none', 'koa-bodyparser', 'parsed-only'] as const) {
    const url = await receiver(ctx, parser)
    const answer = await forwardOperation({
      baseUrl: url,
      path: '/api/create-message',
      fields: FIELDS,
      secret: SECRET,
      from: 'instance-a',
      to: 'holder',
      clientIp: '198.51.100.7',
      clientBaseUrl: 'https://zap.example.com/gw',
    })
    assert.equal(answer.status, 200, `${parser}: ${JSON.stringify(answer.body)}`)
    assert.deepEqual(
      answer.body,
      {
        status: 200,
        message: 'ok',
        received: JSON.parse(JSON.stringify(FIELDS)),
        forwardedBy: 'instance-a',
        from: { instanceId: 'instance-a', clientIp: '198.51.100.7', baseUrl: 'https://zap.example.com/gw' },
      },
      parser,
    )
  }
})

test('a request without the forwarding header passes untouched, unmarked', async ctx => {
  for (const parser of ['none', 'koa-bodyparser'] as const) {
    const url = await receiver(ctx, parser)
    const answer = await post(`${url}/api/create-message`, { a: '1' })
    assert.equal(answer.status, 200)
    assert.equal(answer.body.forwardedBy, null)
    assert.equal(answer.body.from, null)
    assert.deepEqual(answer.body.received, parser === 'none' ? null : { a: '1' }, 'the body is left for the gateway to read')
  }
})

test('the forwarded path is signed with the holder mount prefix and query', async ctx => {
  const url = await receiver(ctx, 'none')
  const answer = await forwardOperation({ baseUrl: `${url}/gateway/`, path: '/api/x?debug=1', fields: { a: 'b' }, secret: SECRET, from: 'i', to: 'holder' })
  assert.equal(answer.status, 200, JSON.stringify(answer.body))
})

test('a forwarded body may exceed the body limit by its base64 and JSON overhead, not more', async ctx => {
  const url = await receiver(ctx, 'none')
  const near = await forwardOperation({ baseUrl: url, path: '/p', fields: { file: 'x'.repeat(2 * LIMIT) }, secret: SECRET, from: 'i', to: 'holder' })
  assert.equal(near.status, 200)
  const over = await forwardOperation({
    baseUrl: url,
    path: '/p',
    fields: { file: 'x'.repeat(forwardedBodyLimit(LIMIT)) },
    secret: SECRET,
    from: 'i',
    to: 'holder',
  })
  assert.equal(over.status, 413)
  assert.deepEqual(over.body, { status: 413, message: 'Corpo da requisição grande demais.' })
})

test('a refusal is answered in the gateway format of its status mode', async ctx => {
  const url = await receiver(ctx, 'none', 'always200')
  const answer = await forwardOperation({ baseUrl: url, path: '/p', fields: { a: 'b' }, secret: 'wrong-secret', from: 'i', to: 'holder' })
  assert.equal(answer.status, 200)
  assert.deepEqual(answer.body, { status: 403, message: 'Requisição encaminhada recusada: assinatura inválida ou expirada.' })
  assert.match(answer.headers['content-type'] ?? '', /^application\/json/)
})

test('a request signed for another instance (an earlier process at this URL) is refused as not the holder: the forwarder asks again; a bad signature is not', async ctx => {
  const url = await receiver(ctx, 'none')
  const earlier = await forwardOperation({ baseUrl: url, path: '/p', fields: { a: 'b' }, secret: SECRET, from: 'i', to: 'the-process-before-a-restart' })
  assert.deepEqual([earlier.status, earlier.notHolder], [403, true])
  const forged = await forwardOperation({ baseUrl: url, path: '/p', fields: { a: 'b' }, secret: 'wrong-secret', from: 'i', to: 'holder' })
  assert.deepEqual([forged.status, forged.notHolder], [403, false])
})

test('a signed body that is not a JSON object is 400, after the signature is checked', async () => {
  // Signed by hand: forwardOperation only ever sends an object.
  const { signForward, ForwardHeaders } = await import('../../../src/http/forwarding/signature.ts')
  const app = new Koa()
  app.use(verifyForwardedRequests(SECRET, { limitBytes: LIMIT, instanceId: 'holder', httpStatus: 'mirror', logger: silentLogger }))
  app.use(c => void (c.body = { status: 200, message: 'ok' }))
  const server = await listen(app)
  try {
    for (const [body, status] of [
      ['{bad', 400],
      ['[1,2]', 400],
      ['"x"', 400],
      ['', 200],
    ] as const) {
      const timestamp = Date.now()
      const nonce = `n-${body}`
      const signature = signForward(SECRET, { method: 'POST', path: '/p', timestamp, nonce, from: 'i', to: 'holder', body })
      const headers = {
        'content-type': 'application/json',
        [ForwardHeaders.forwardedBy]: 'i',
        [ForwardHeaders.forwardedTo]: 'holder',
        [ForwardHeaders.timestamp]: String(timestamp),
        [ForwardHeaders.nonce]: nonce,
        [ForwardHeaders.signature]: signature,
      }
      const answer = await request(`${server.url}/p`, { method: 'POST', headers, body })
      assert.equal(answer.status, status, `${body}: ${answer.text}`)
    }
  } finally {
    await server.stop()
  }
})

test.run()
