import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { coalescedForwards, BATCH_PATH } from '../../../src/http/forwarding/coalesce.ts'
import type { ForwardFailedError } from '../../../src/http/forwarding/send.ts'
import { forwardedBodyLimit } from '../../../src/http/forwarding/receive.ts'
import { startFakeHolder } from '../../helpers/forwarding.ts'
import Koa from 'koa'
import { forwardedBatch } from '../../../src/http/forwarding/batch-receive.ts'
import { requestState } from '../../../src/http/request-state.ts'
import { listen } from '../../helpers/http.ts'
import { waitFor } from '../../helpers/gateway.ts'

// The time and bytes a batched forward is given, and the edges of a batch's answer (coalesce.test.ts: what a batch is and how it is answered).

test('a batched forward gets its answer within the forward time-out from its start, as a plain forward, not from the first answer line', async () => {
  // A holder whose batch answers its first line at 600 ms and its second at 1,300 ms; plain forwards never answered (two forwards made in one turn go as a batch).
  const server = createServer((req, res) => {
    if (req.url !== BATCH_PATH) return
    const line = (i: number) => `${JSON.stringify({ i, status: 200, headers: {}, body: { status: 200, message: 'ok' } })}\n`
    res.writeHead(200, { 'content-type': 'application/x-ndjson' })
    const timers = [setTimeout(() => res.write(line(0)), 600), setTimeout(() => res.end(line(1)), 1_300)]
    res.once('close', () => timers.forEach(clearTimeout))
  })
  server.listen(0, '127.0.0.1')
  await new Promise(resolve => server.once('listening', resolve))
  try {
    const forward = coalescedForwards()
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const raw = Buffer.from('{"message":"oi"}')
    const request = { baseUrl, path: '/api/create-message', fields: {}, uploads: new Map(), raw, secret: 's', from: 'a', to: 'b', timeoutMs: 1_000 }
    const [answered, late] = await Promise.allSettled([forward(request), forward(request)])
    assert.is(answered.status, 'fulfilled', 'the line in time is answered')
    assert.is(late.status, 'rejected', 'the line past the time-out (1,300 ms after it was sent) is not waited for')
    assert.is(((late as PromiseRejectedResult).reason as ForwardFailedError).reason, 'timeout')
  } finally {
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))
  }
})

test("a batch, its items' paths, clients and URLs included, stays within the forwarded body limit of the smallest body limit its bodies fit", async () => {
  const fake = await startFakeHolder('never-answer')
  try {
    const forward = coalescedForwards()
    const bodyLimit = 2048 // each client's body at its limit
    const raw = Buffer.from(JSON.stringify({ message: 'x'.repeat(bodyLimit - 14) }))
    assert.is(raw.length, bodyLimit)
    const client = { clientIp: '2001:db8:85a3::8a2e:370:7334', clientBaseUrl: 'https://whatsapp-gateway.example.com.br/integracao/zapgate' }
    const request = { baseUrl: fake.url, path: '/api/create-message', fields: {}, uploads: new Map(), raw, secret: 's', from: 'a', to: 'b', ...client }
    const sent = Array.from({ length: 40 }, () => forward(request))
    await waitFor(async () => fake.requests.length >= 2)
    const batch = fake.requests.find(sent => sent.url === BATCH_PATH)!
    assert.ok(Number(batch.headers['content-length']) <= forwardedBodyLimit(bodyLimit), `${batch.headers['content-length']} bytes, over what the holder takes`)
    await fake.stop()
    await Promise.allSettled(sent)
  } finally {
    await fake.stop()
  }
})

// Such a holder's host answers its 404 as text, or as JSON (a common Koa 404 middleware; before, that 404 was each forward's answer though none ran).
for (const [type, notFound] of [
  ['text/plain', 'Not Found'],
  ['application/json; charset=utf-8', '{"error":"Not Found"}'],
]) {
  test(`a holder without a batch path (a version before batches, in a rolling upgrade; its 404 ${type}) gets each forward alone, then every later one alone`, async () => {
    const paths: string[] = []
    const server = createServer((req, res) => {
      paths.push(req.url ?? '')
      req.resume()
      req.on('end', () =>
        req.url === BATCH_PATH
          ? res.writeHead(404, { 'content-type': type! }).end(notFound)
          : res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":200,"message":"Mensagem de texto enviada."}'),
      )
    })
    server.listen(0, '127.0.0.1')
    await new Promise(resolve => server.once('listening', resolve))
    try {
      const forward = coalescedForwards()
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const request = {
        baseUrl,
        path: '/api/create-message',
        fields: {},
        uploads: new Map(),
        raw: Buffer.from('{"message":"oi"}'),
        secret: 's',
        from: 'a',
        to: 'b',
      }
      for (const outcome of await Promise.allSettled([forward(request), forward(request)])) {
        assert.is(outcome.status, 'fulfilled', 'answered by the holder, not 503')
        assert.is((outcome as PromiseFulfilledResult<{ status: number }>).value.status, 200)
      }
      assert.equal(paths, [BATCH_PATH, '/api/create-message', '/api/create-message'], 'the batch refused, each then sent alone')
      await Promise.all([forward(request), forward(request)])
      assert.equal(paths.slice(3), ['/api/create-message', '/api/create-message'], 'no batch tried again')
    } finally {
      server.closeAllConnections()
      await new Promise(resolve => server.close(resolve))
    }
  })
}

for (const mode of ['mirror', 'always200'] as const)
  test(`a forward whose answer JSON cannot hold is answered as an internal error, and its batch still ends (${mode}: HTTP ${mode === 'mirror' ? 500 : 200})`, async () => {
    const app = new Koa()
    app.use((ctx, next) => {
      const state = requestState(ctx) // as the body reader leaves a verified batch
      state.forwardedFrom = { instanceId: 'a' }
      state.body = {
        fields: {
          items: [
            { path: '/odd', body: {} },
            { path: '/fine', body: {} },
          ],
        },
        uploads: new Map(),
      }
      return next()
    })
    const chains = new Map<string, Koa.Middleware>([
      ['/odd', ctx => void ((ctx.status = 200), (ctx.body = { status: 200, count: 1n }))],
      ['/fine', ctx => void ((ctx.status = 200), (ctx.body = { status: 200, message: 'ok' }))],
    ])
    app.use(forwardedBatch(chains, mode))
    const server = await listen(app)
    try {
      const answer = await fetch(`${server.url}/`, { method: 'POST', signal: AbortSignal.timeout(5_000) })
      const lines = (await answer.text())
        .split('\n')
        .filter(Boolean)
        .map(line => JSON.parse(line))
      assert.equal(lines.find(line => line.i === 0)?.body, { status: 500, message: 'Erro interno.' })
      assert.is(lines.find(line => line.i === 0)?.status, mode === 'mirror' ? 500 : 200, 'the HTTP status the forwarder relays, as the mode words it')
      assert.equal(lines.find(line => line.i === 1)?.body, { status: 200, message: 'ok' })
    } finally {
      await server.stop()
    }
  })

test.run()
