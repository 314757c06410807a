import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { httpWebhookSender } from '../../adapters/webhook-http/index.ts'

const test = suite('adapters/webhook-http: a receiver slow to end its answers')

test('gets at most concurrencyPerHost connections: a delivery holds its slot until its answer is over, not only until its status', async () => {
  // Each answer: the status and one byte at once, the end of the body 300 ms later.
  let open = 0
  let mostOpen = 0
  const server = http.createServer((req, res) => {
    req.resume()
    mostOpen = Math.max(mostOpen, ++open)
    res.writeHead(200, { 'content-type': 'text/plain' }).write('a')
    setTimeout(() => {
      open--
      res.end('b')
    }, 300)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  const sender = httpWebhookSender({ allowPrivateUrls: true, concurrencyPerHost: 2, concurrencyPerDevice: 2 })
  try {
    // One after the other, as an outbox drains a backlog: each send answers on the status.
    for (let i = 0; i < 6; i++) assert.is((await sender.send({ url, body: '{}', headers: {}, deviceId: 'd1' })).status, 200)
    await sender.close!()
    assert.ok(mostOpen <= 2, `${mostOpen} answers open at once at the receiver`)
  } finally {
    server.closeAllConnections()
    server.close()
  }
})

test.run()
