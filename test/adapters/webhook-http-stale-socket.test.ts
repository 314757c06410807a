import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { httpWebhookSender } from '../../adapters/webhook-http/index.ts'
import { rawServer } from '../helpers/raw-receiver.ts'

const test = suite('httpWebhookSender: a kept-alive connection the receiver closed')

const delivery = (url: string) => ({ url, body: '{"event":"Texto"}', deviceId: 'd1', headers: { 'webhook-id': 'msg_1' } })

/**
 * A TCP receiver: `answer(requestOnConnection, connection)` says what to do with each whole request
 * (`ok`: 200 kept alive; `reset`: an RST before any byte of an answer, as a receiver does that closed
 * an idle connection at the moment the sender reused it; `partial`: the first bytes of a status line,
 * then an RST, as a receiver does that read the request and failed while answering).
 */
async function receiver(answer: (requestOnConnection: number, connection: number) => 'ok' | 'reset' | 'partial') {
  const server = await rawServer(({ socket, onConnection, connection }) => {
    const what = answer(onConnection, connection)
    if (what === 'reset') return void socket.resetAndDestroy()
    if (what === 'partial') return void socket.write('HTTP/1.1 20', () => socket.resetAndDestroy())
    socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n')
  })
  return { url: server.url, counts: () => ({ connections: server.connections(), requests: server.count() }), stop: server.stop }
}

test('a reused connection reset before any answer byte is retried at once on a new connection: one delivery, not a failed attempt', async () => {
  const server = await receiver(requestOnConnection => (requestOnConnection === 0 ? 'ok' : 'reset'))
  const sender = httpWebhookSender({ allowPrivateUrls: true, timeoutMs: 2_000 })
  try {
    assert.equal(await sender.send(delivery(server.url)), { status: 200 })
    assert.equal(
      await sender.send(delivery(server.url)),
      { status: 200 },
      'the second POST went out on the kept-alive connection, was reset, and was sent again',
    )
    assert.equal(server.counts(), { connections: 2, requests: 3 })
  } finally {
    await sender.close!()
    await server.stop()
  }
})

test('a receiver that resets every request after the first still fails the delivery: one retry on a new connection, never a loop', async () => {
  const server = await receiver((requestOnConnection, connection) => (connection === 0 && requestOnConnection === 0 ? 'ok' : 'reset'))
  const sender = httpWebhookSender({ allowPrivateUrls: true, timeoutMs: 2_000 })
  try {
    assert.equal(await sender.send(delivery(server.url)), { status: 200 })
    const error = await sender.send(delivery(server.url)).then(
      () => undefined,
      (e: unknown) => e as { code?: string },
    )
    assert.ok(error, 'the delivery failed')
    assert.is(error.code, 'ECONNRESET')
    assert.equal(server.counts(), { connections: 2, requests: 3 }, 'the reused connection, then one new one')
  } finally {
    await sender.close!()
    await server.stop()
  }
})

test('a reused connection reset after the first bytes of an answer is a failed attempt, not sent again: the receiver read it', async () => {
  const server = await receiver(requestOnConnection => (requestOnConnection === 0 ? 'ok' : 'partial'))
  const sender = httpWebhookSender({ allowPrivateUrls: true, timeoutMs: 2_000 })
  try {
    assert.equal(await sender.send(delivery(server.url)), { status: 200 })
    const error = await sender.send(delivery(server.url)).then(
      () => undefined,
      (e: unknown) => e as { code?: string },
    )
    assert.ok(error, 'the delivery failed')
    assert.equal(server.counts(), { connections: 1, requests: 2 }, 'the POST the receiver began to answer was not sent again on a new connection')
  } finally {
    await sender.close!()
    await server.stop()
  }
})

test('a stale reused connection met while the gateway is closing is not sent again, and not an attempt: it throws the closing reason (sent after the restart)', async () => {
  const closing = new AbortController()
  const server = await rawServer(({ socket, onConnection }) => {
    if (onConnection === 0) return void socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n')
    closing.abort(new Error('the gateway is closing'))
    socket.resetAndDestroy()
  })
  const sender = httpWebhookSender({ allowPrivateUrls: true, timeoutMs: 2_000 })
  try {
    assert.equal(await sender.send(delivery(server.url)), { status: 200 })
    const error = await sender.send({ ...delivery(server.url), closing: closing.signal }).then(
      () => undefined,
      (e: unknown) => e,
    )
    assert.is(error, closing.signal.reason, 'rejected with the closing reason, as a POST not begun')
    assert.is(server.count(), 2, 'not sent again during the stop')
  } finally {
    await sender.close!()
    await server.stop()
  }
})

test('a reset on a new connection is a failed attempt at once (nothing stale to blame)', async () => {
  const server = await receiver(() => 'reset')
  const sender = httpWebhookSender({ allowPrivateUrls: true, timeoutMs: 2_000 })
  try {
    let threw = false
    await sender.send(delivery(server.url)).catch(() => (threw = true))
    assert.ok(threw)
    assert.equal(server.counts(), { connections: 1, requests: 1 })
  } finally {
    await sender.close!()
    await server.stop()
  }
})

test.run()
