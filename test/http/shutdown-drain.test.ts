import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { exchange, openSocket, rawPost } from '../helpers/raw-http.ts'
import { startGateway, type TestGateway } from '../helpers/gateway.ts'
import { fileServer } from '../helpers/file-server.ts'
import { listen } from '../helpers/http.ts'
import { Readable } from 'node:stream'
import Koa from 'koa'
import { internalsOf } from '../../src/internals.ts'
import type { MediaLinks } from '../../src/domain/media-links.ts'

/**
 * gateway.close() in a host app whose server keeps its connections (issue 20.2): the requests in
 * flight are answered before the sessions close; a request arriving meanwhile on a kept-alive
 * connection is answered 503 with Retry-After and Connection: close.
 */
const test = suite<{ t?: TestGateway }>('gateway.close(): the shutdown drain')
test.after.each(async ctx => {
  await ctx.t?.stop()
})

const CONTACT = '5511970000002'

test('sends in flight are answered 200 and sent before close() resolves; a request on a kept-alive connection during the drain gets 503', async ctx => {
  const t = (ctx.t = await startGateway({ minIntervalMs: 300, rateLimit: false }))
  const { authkey } = await t.register()
  await t.linkedDevice(authkey, 'loja', '5511900000002')
  // A kept-alive connection, idle when the drain starts.
  const socket = await openSocket(t.url)
  const first = await exchange(socket, rawPost('/api/auth', {}))
  assert.match(first, /^HTTP\/1\.1 401/)
  assert.match(first, /keep-alive/i)

  const answered: string[] = []
  const sends = Array.from({ length: 4 }, (_, i) =>
    t.post('/api/create-message', { appkey: 'loja', authkey, to: CONTACT, message: `em voo ${i}` }).then(answer => (answered.push(`send ${i}`), answer)),
  )
  // The second send goes out 300 ms after the first: by then all four have long been received.
  await waitUntil(() => t.network.inbox(CONTACT).length >= 2)
  const closed = t.gateway.close().then(() => answered.push('closed'))

  const refused = await exchange(socket, rawPost('/api/create-message', { appkey: 'loja', authkey, to: CONTACT, message: 'tarde' }))
  assert.match(refused, /^HTTP\/1\.1 503/)
  assert.match(refused, /\r\nRetry-After: 5\r\n/i)
  assert.match(refused, /\r\nConnection: close\r\n/i)
  const body = JSON.parse(refused.slice(refused.indexOf('\r\n\r\n') + 4))
  assert.equal(body, { status: 503, message: 'O gateway está sendo encerrado. Tente novamente em instantes.' })
  await new Promise(resolve => socket.once('close', resolve))

  const answers = await Promise.all(sends)
  await closed
  assert.equal(
    answers.map(a => a.status),
    [200, 200, 200, 200],
  )
  assert.is(answered.at(-1), 'closed', 'close() resolved after every answer')
  const texts = t.network.inbox(CONTACT).map(entry => (entry as { text?: string }).text)
  assert.equal(texts.sort(), ['em voo 0', 'em voo 1', 'em voo 2', 'em voo 3'], 'every answered send reached the network; the refused one did not')
})

test('close({ graceMs }) goes on once the grace time is over, without the request that outlasts it', async ctx => {
  const files = await fileServer({ '/lento.png': { body: Buffer.alloc(1000), type: 'image/png', delayMs: 60_000 } })
  try {
    const t = (ctx.t = await startGateway({ allowPrivateUrls: true, mediaTimeoutMs: 60_000, rateLimit: false }))
    const { authkey } = await t.register()
    await t.linkedDevice(authkey, 'loja', '5511900000003')
    let answered = false
    const slow = t.post('/api/create-message', { appkey: 'loja', authkey, to: CONTACT, file: `${files.url}/lento.png` }).then(
      () => (answered = true),
      () => (answered = true),
    )
    await waitUntil(() => files.requests.length === 1)
    let done = false
    const closing = t.gateway.close({ graceMs: 200 }).then(() => (done = true))
    // The download takes 60 s: close() resolves after the 200 ms grace, not after it.
    await waitUntil(() => done, 30_000)
    await closing
    assert.is(answered, false)
    assert.is(t.network.inbox(CONTACT).length, 0)
    void slow
  } finally {
    await files.stop()
  }
})

test('a request in flight when the drain starts is answered 200 with Connection: close, and its kept-alive connection is closed', async ctx => {
  const files = await fileServer({ '/lento.png': { body: pngBytes(), type: 'image/png', delayMs: 500 } })
  try {
    const t = (ctx.t = await startGateway({ allowPrivateUrls: true, rateLimit: false }))
    const { authkey } = await t.register()
    await t.linkedDevice(authkey, 'loja', '5511900000004')
    const socket = await openSocket(t.url)
    const first = await exchange(socket, rawPost('/api/auth', {}))
    assert.match(first, /\r\nConnection: keep-alive\r\n/i, 'kept alive before the drain')
    // In flight: its media download answers after 500 ms.
    const inFlight = exchange(socket, rawPost('/api/create-message', { appkey: 'loja', authkey, to: CONTACT, file: `${files.url}/lento.png` }))
    await waitUntil(() => files.requests.length === 1)
    const closed = t.gateway.close()
    const answer = await inFlight
    assert.match(answer, /^HTTP\/1\.1 200/)
    assert.match(answer, /\r\nConnection: close\r\n/i)
    await new Promise(resolve => (socket.destroyed ? resolve(undefined) : socket.once('close', resolve)))
    await closed
    assert.is(t.network.inbox(CONTACT).length, 1, 'the answered send reached the network')
  } finally {
    await files.stop()
  }
})

test('a media download whose client left before its stream began is no request in flight: close() finds none left', async ctx => {
  const warnings: string[] = []
  const keep = (_: unknown, message?: string) => void warnings.push(message ?? '')
  const t = (ctx.t = await startGateway({ logger: { debug() {}, info() {}, warn: keep, error: keep } }))
  const { authkey } = await t.register()
  const device = await t.linkedDevice(authkey, 'midia', '5511900000005')
  // The gateway's router in a host app that sees when the media answer's connection closes.
  let clientLeft!: () => void
  const left = new Promise<void>(resolve => (clientLeft = resolve))
  const app = new Koa()
  app.use((koa, next) => (koa.res.once('close', () => clientLeft()), next()))
  app.use(t.gateway.routes())
  const host = await listen(app)
  try {
    const { transport, mediaLinks } = internalsOf(t.gateway) as unknown as { transport: { downloadMedia?: unknown }; mediaLinks: MediaLinks }
    let asked!: () => void
    const asking = new Promise<void>(resolve => (asked = resolve))
    // The transport gives its stream once the client has gone (a slow start of a download from WhatsApp).
    transport.downloadMedia = async () => (asked(), await left, { data: Readable.from([Buffer.alloc(1024, 1)]), mimetype: 'video/mp4' })
    const client = new AbortController()
    const download = fetch(`${host.url}/media/${await mediaLinks.sign({ deviceId: device.id, message: { id: '3EB0SAIU' } })}`, { signal: client.signal })
    await asking
    client.abort()
    await download.catch(() => undefined)
    await t.gateway.close({ graceMs: 1000 })
    assert.equal(warnings, [], 'no request left in flight')
  } finally {
    await host.stop()
  }
})

test.run()

// --- Helpers ---

async function waitUntil(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

/** A tiny valid PNG. */
function pngBytes(): Buffer {
  return Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')
}
