import assert from 'node:assert/strict'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import { test } from 'uvu'
import { forwardOperation } from '../../../src/http/forwarding/send.ts'
import { verifyForward } from '../../../src/http/forwarding/signature.ts'
import { HOLDER_ID, SECRET } from '../../helpers/forwarding.ts'

test("a plain JSON body goes to the holder as the client's bytes, signed as such; with uploads, as the fields' JSON", async () => {
  const received: { body: Buffer; headers: IncomingHttpHeaders; path: string }[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', chunk => chunks.push(chunk))
    req.on('end', () => {
      received.push({ body: Buffer.concat(chunks), headers: req.headers, path: req.url! })
      res.setHeader('content-type', 'application/json')
      res.end('{"status":200,"message":"ok"}')
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  try {
    const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`
    const raw = Buffer.from('{ "authkey" : "k",\n  "message": "ol\\u00e1" }')
    const base = { baseUrl, path: '/api/create-message', fields: { authkey: 'k', message: 'olá' }, secret: SECRET, from: 'a', to: HOLDER_ID }
    await forwardOperation({ ...base, raw })
    await forwardOperation({ ...base, raw, uploads: new Map([['file', { data: Buffer.from('png') }]]) })
    assert.equal(received[0]!.body.toString(), raw.toString(), 'the bytes as the client sent them')
    assert.deepEqual(JSON.parse(received[1]!.body.toString()), { authkey: 'k', message: 'olá', file: 'data:;base64,cG5n' })
    for (const { body, headers, path } of received)
      assert.equal(verifyForward(SECRET, { receiver: HOLDER_ID, method: 'POST', path, headers, body }), 'ok', 'signed over the bytes sent')
  } finally {
    await new Promise(resolve => server.close(resolve))
  }
})

test.run()
