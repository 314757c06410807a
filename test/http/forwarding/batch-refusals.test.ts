import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { coalescedForwards, BATCH_PATH } from '../../../src/http/forwarding/coalesce.ts'

const test = suite('Coalesced forwards: what a holder refuses, and what a batch may weigh')

// A holder of a version before batches (a rolling upgrade) whose host app words its 404s as JSON
// (a common Koa error/404 middleware): nothing ran for the batch, so each forward must go alone, as for a text 404.
test('a holder without a batch path whose host answers 404 as JSON gets each forward alone, not a 404 for a send that never ran', async () => {
  const paths: string[] = []
  const server = createServer((req, res) => {
    paths.push(req.url ?? '')
    req.resume()
    req.on('end', () =>
      req.url === BATCH_PATH
        ? res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' }).end('{"error":"Not Found"}')
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
    const outcomes = await Promise.allSettled([forward(request), forward(request)])
    for (const outcome of outcomes) {
      assert.is(outcome.status, 'fulfilled')
      assert.is((outcome as PromiseFulfilledResult<{ status: number }>).value.status, 200, 'the send ran on the holder, not answered 404')
    }
    assert.equal(paths, [BATCH_PATH, '/api/create-message', '/api/create-message'], 'the batch refused, each then sent alone')
  } finally {
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))
  }
})

test('a batch weighs less than the 64 KiB from which a holder holds a body against its media budget: 65,535 bytes go together, 65,536 apart', async () => {
  const batches: number[] = []
  const server = createServer((req, res) => {
    let bytes = 0
    req.on('data', chunk => (bytes += chunk.length))
    req.on('end', () => {
      if (req.url !== BATCH_PATH) return res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":200}')
      batches.push(bytes)
      res
        .writeHead(200, { 'content-type': 'application/x-ndjson' })
        .end('{"i":0,"status":200,"headers":{},"body":{"status":200}}\n{"i":1,"status":200,"headers":{},"body":{"status":200}}\n')
    })
  })
  server.listen(0, '127.0.0.1')
  await new Promise(resolve => server.once('listening', resolve))
  try {
    const forward = coalescedForwards()
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    // A batch of two: {"items":[ item , item ]}, each item {"path":"/api/create-message","body": <raw> } (37 + raw + 1 bytes): 89 bytes besides the two bodies.
    const request = (bytes: number) => ({ baseUrl, path: '/api/create-message', fields: {}, raw: Buffer.alloc(bytes, 0x20), secret: 's', from: 'a', to: 'b' })
    const pair = (total: number) => Promise.all([forward(request(32_000)), forward(request(total - 89 - 32_000))])
    assert.equal(
      (await pair(65_535)).map(answer => answer.status),
      [200, 200],
    )
    assert.equal(batches, [65_535], 'two forwards of 65,535 bytes in all go in one batch')
    assert.equal(
      (await pair(65_536)).map(answer => answer.status),
      [200, 200],
    )
    assert.equal(batches, [65_535], 'two of 65,536 go alone: no batch reaches the media threshold (request-body.ts)')
  } finally {
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))
  }
})

test.run()
