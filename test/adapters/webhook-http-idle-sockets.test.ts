import { createConnection, createServer, type Socket } from 'node:net'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { httpWebhookSender } from '../../adapters/webhook-http/index.ts'
import { rawServer } from '../helpers/raw-receiver.ts'

const test = suite('httpWebhookSender: idle kept-alive connections a middlebox dropped silently')

const delivery = (url: string) => ({ url, body: '{"event":"Texto"}', deviceId: 'd1', headers: { 'webhook-id': 'msg_1' } })

/**
 * A TCP proxy in front of `targetPort` standing in for a NAT or load balancer that forgets idle
 * connections without telling anyone: once a connection has carried no byte for `idleMs`, nothing
 * more passes on it either way, not even a close (no FIN, no RST): its ends only learn by timing out.
 */
async function blackHolingProxy(targetPort: number, idleMs: number) {
  let lastByte = Date.now()
  let forgotten = 0
  const sockets = new Set<Socket>()
  const server = createServer(client => {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort })
    let dead = false
    let timer: NodeJS.Timeout | undefined
    const touch = () => {
      lastByte = Date.now()
      clearTimeout(timer)
      timer = setTimeout(() => ((dead = true), forgotten++), idleMs)
    }
    touch()
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ]) {
      sockets.add(from)
      from.on('data', chunk => void (dead || (touch(), to.write(chunk))))
      from.on('end', () => void (dead || to.end()))
      from.on('error', () => {})
      from.on('close', () => (clearTimeout(timer), sockets.delete(from)))
    }
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://127.0.0.1:${port}/hook`,
    /** Connections it has forgotten (black-holed) so far. */
    forgotten: () => forgotten,
    /** Resolves once no byte has gone through it for `ms`. */
    async quietFor(ms: number) {
      while (Date.now() - lastByte < ms) await new Promise(resolve => setTimeout(resolve, 50))
    },
    close: () =>
      new Promise<void>(resolve => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

const portOf = (url: string) => Number(new URL(url).port)

test('a connection idle past the time the receiver announced (Keep-Alive: timeout=2) is not reused: the next POST opens a new one instead of hanging', async () => {
  const receiver = await rawServer(({ socket }) =>
    socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\nKeep-Alive: timeout=2\r\n\r\n'),
  )
  const proxy = await blackHolingProxy(portOf(receiver.url), 1_500)
  const sender = httpWebhookSender({ allowPrivateUrls: true, timeoutMs: 10_000 })
  try {
    assert.equal(await sender.send(delivery(proxy.url)), { status: 200 })
    await proxy.quietFor(2_000) // past the receiver's announced idle time, and the proxy's 1.5 s
    const second = await sender.send(delivery(proxy.url)).catch((error: Error) => error.message)
    assert.equal(second, { status: 200 }, 'delivered, not left to time out on a connection nobody answers on')
    assert.is(receiver.count(), 2)
    assert.is(receiver.connections(), 2, 'on a new connection')
  } finally {
    await sender.close!()
    await proxy.close()
    await receiver.stop()
  }
})

test('a connection idle for longer than a few seconds is not reused even when the receiver announces no idle time', async () => {
  const receiver = await rawServer(({ socket }) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n'))
  const proxy = await blackHolingProxy(portOf(receiver.url), 5_000)
  const sender = httpWebhookSender({ allowPrivateUrls: true, timeoutMs: 10_000 })
  try {
    assert.equal(await sender.send(delivery(proxy.url)), { status: 200 })
    await proxy.quietFor(5_500)
    const second = await sender.send(delivery(proxy.url)).catch((error: Error) => error.message)
    assert.equal(second, { status: 200 }, 'delivered, not left to time out on a connection nobody answers on')
    assert.is(receiver.connections(), 2, 'on a new connection')
  } finally {
    await sender.close!()
    await proxy.close()
    await receiver.stop()
  }
})

test('a connection in use is not cut by the idle limit: a receiver that takes longer than it to answer is still heard', async () => {
  const receiver = await rawServer(({ socket }) => {
    setTimeout(() => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n'), 5_000)
  })
  const sender = httpWebhookSender({ allowPrivateUrls: true, timeoutMs: 10_000 })
  try {
    assert.equal(await sender.send(delivery(receiver.url)), { status: 200 })
  } finally {
    await sender.close!()
    await receiver.stop()
  }
})

test.run()
