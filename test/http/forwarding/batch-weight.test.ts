import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { coalescedForwards, BATCH_PATH } from '../../../src/http/forwarding/coalesce.ts'

const test = suite('Coalesced forwards: what a batch may weigh')

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
