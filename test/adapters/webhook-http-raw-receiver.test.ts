import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Socket } from 'node:net'
import { httpWebhookSender } from '../../adapters/webhook-http/index.ts'
import { rawServer as rawTcpServer } from '../helpers/raw-receiver.ts'

const test = suite('helper-hooks: raw receivers of the default sender')

const delivery = (url: string, body = '{"event":"Texto"}') => ({
  url,
  body,
  deviceId: 'd1',
  headers: { 'webhook-id': 'msg_1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' },
})

/** The shared raw server, its callback given the socket and the request's index as before. */
const rawServer = (onRequest: (socket: Socket, index: number) => void) => rawTcpServer(({ socket, index }) => onRequest(socket, index))

test('a 200 whose body is cut by the receiver closing the connection is an answer (delivered)', async () => {
  const server = await rawServer(socket => {
    socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nabc')
    setTimeout(() => socket.destroy(), 20)
  })
  const sender = httpWebhookSender({ allowPrivateUrls: true, timeoutMs: 2_000 })
  try {
    assert.equal(await sender.send(delivery(server.url)), { status: 200 })
  } finally {
    await sender.close!()
    await server.stop()
  }
})

test('a receiver that closes the connection before any status is no answer (throws)', async () => {
  const server = await rawServer(socket => socket.destroy())
  const sender = httpWebhookSender({ allowPrivateUrls: true, timeoutMs: 2_000 })
  try {
    let threw = false
    await sender.send(delivery(server.url)).catch(() => (threw = true))
    assert.ok(threw)
  } finally {
    await sender.close!()
    await server.stop()
  }
})

test('a 103 Early Hints then nothing: no answer (throws), never a delivery', async () => {
  const server = await rawServer(socket => {
    socket.write('HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n')
  })
  const sender = httpWebhookSender({ allowPrivateUrls: true, timeoutMs: 500 })
  try {
    let result: unknown
    await sender.send(delivery(server.url)).then(
      r => (result = r),
      e => (result = 'threw ' + e.message),
    )
    assert.match(String(typeof result === 'object' ? JSON.stringify(result) : result), /^threw/)
  } finally {
    await sender.close!()
    await server.stop()
  }
})

test('a 100 Continue then 200: status 200', async () => {
  const server = await rawServer(socket => {
    socket.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n')
  })
  const sender = httpWebhookSender({ allowPrivateUrls: true, timeoutMs: 1_000 })
  try {
    assert.equal(await sender.send(delivery(server.url)), { status: 200 })
  } finally {
    await sender.close!()
    await server.stop()
  }
})

test.run()
