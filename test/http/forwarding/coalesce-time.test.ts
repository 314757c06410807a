import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { coalescedForwards, BATCH_PATH } from '../../../src/http/forwarding/coalesce.ts'
import type { ForwardFailedError } from '../../../src/http/forwarding/send.ts'
import { forwardedBodyLimit } from '../../../src/http/forwarding/receive.ts'
import { startFakeHolder } from '../../helpers/forwarding.ts'
import { waitFor } from '../../helpers/gateway.ts'

// The time and bytes a batched forward is given (coalesce.test.ts: what a batch is and how it is answered).

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

test.run()
