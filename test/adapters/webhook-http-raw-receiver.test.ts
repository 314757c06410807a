import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createServer, type Socket } from 'node:net'
import { httpWebhookSender } from '../../adapters/webhook-http/index.ts'

const test = suite('helper-hooks: raw receivers of the default sender')

const delivery = (url: string, body = '{"event":"Texto"}') => ({
  url,
  body,
  deviceId: 'd1',
  headers: { 'webhook-id': 'msg_1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' },
})

/** A TCP server that, once it has read a whole request (headers + content-length body), runs `onRequest`. */
async function rawServer(onRequest: (socket: Socket, index: number) => void) {
  let index = 0
  const sockets = new Set<Socket>()
  const server = createServer(socket => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    let buffer = Buffer.alloc(0)
    socket.on('data', chunk => {
      buffer = Buffer.concat([buffer, chunk])
      for (;;) {
        const end = buffer.indexOf('\r\n\r\n')
        if (end < 0) return
        const head = buffer.subarray(0, end).toString()
        const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0)
        if (buffer.length < end + 4 + length) return
        buffer = buffer.subarray(end + 4 + length)
        onRequest(socket, index++)
      }
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://127.0.0.1:${port}/hook`,
    count: () => index,
    stop: () =>
      new Promise<void>(resolve => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}

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
