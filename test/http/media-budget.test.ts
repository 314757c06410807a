import { request } from 'node:http'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { mediaHeld, startGateway, type TestGateway } from '../helpers/gateway.ts'
import { fileServer, type FileServer } from '../helpers/file-server.ts'
import { exchange, openSocket } from '../helpers/raw-http.ts'

/**
 * The media budget (issue 20.6) counts a media URL while it downloads (its Content-Length, then the
 * bytes arriving past it; test/http/media-budget-carousels.test.ts) and a large body while its request lasts; past it a send is answered 429 with Retry-After, and the
 * bytes are given back once each request is answered.
 */
const test = suite<{ t: TestGateway; files: FileServer; authkey: string }>('mediaBytesInFlight: the process-wide media budget')
test.before(async ctx => {
  ctx.files = await fileServer({
    // 4 MB (the largest file): its headers come at once, its body 1.5 s later, and it holds 4 MB meanwhile.
    '/lenta.png': { body: pngOf(4 * MB), type: 'image/png', bodyDelayMs: 1500 },
    '/rapida.png': { body: pngBytes(), type: 'image/png' },
    '/grande.png': { body: pngOf(3 * MB), type: 'image/png' },
  })
  ctx.t = await startGateway({ allowPrivateUrls: true, mediaMaxBytes: '4mb', mediaBytesInFlight: '6mb', rateLimit: false })
  ctx.authkey = (await ctx.t.register()).authkey
  await ctx.t.linkedDevice(ctx.authkey, 'loja', '5511900000005')
})
test.after(async ctx => {
  await ctx.t.stop()
  await ctx.files.stop()
})

const BUSY = 'Servidor ocupado com outros arquivos. Tente novamente em instantes.'

/** Until the `n`th download of /lenta.png has begun and its headers (4 MB declared) reached the gateway (4 MB held of its budget). */
async function lentaHeld(t: TestGateway, files: FileServer, n: number): Promise<void> {
  while (files.requests.filter(p => p === '/lenta.png').length < n) await new Promise(resolve => setTimeout(resolve, 10))
  await mediaHeld(t.gateway, 4 * MB)
}

test('a download in flight holds its declared size: a second one past the budget is 429, and passes once the first is answered', async ({
  t,
  files,
  authkey,
}) => {
  const slow = t.post('/api/create-message', { appkey: 'loja', authkey, to: '5511970000005', file: `${files.url}/lenta.png` })
  await lentaHeld(t, files, 1)
  const refused = await t.post('/api/create-message', { appkey: 'loja', authkey, to: '5511970000005', file: `${files.url}/grande.png` })
  assert.is(refused.status, 429)
  assert.equal(refused.body, { status: 429, message: BUSY })
  assert.is(refused.headers.get('retry-after'), '5')
  assert.is((await slow).status, 200)
  assert.is((await t.post('/api/create-message', { appkey: 'loja', authkey, to: '5511970000005', file: `${files.url}/grande.png` })).status, 200)
})

test('a large base64 body counts by its size; a refused one is read and dropped so its answer arrives', async ({ t, files, authkey }) => {
  const slow = t.post('/api/create-message', { appkey: 'loja', authkey, to: '5511970000005', file: `${files.url}/lenta.png` })
  await lentaHeld(t, files, 2)
  const big = Buffer.alloc(3 * 1024 * 1024, 1)
  big.write('%PDF-1.4\n')
  const refused = await t.post('/api/create-message', { appkey: 'loja', authkey, to: '5511970000005', file: big.toString('base64') })
  assert.is(refused.status, 429, '4 MB held by the download, a 4 MB body on top is past 6 MB')
  assert.is(refused.body.message, BUSY)
  assert.is((await slow).status, 200)
  assert.is((await t.post('/api/create-message', { appkey: 'loja', authkey, to: '5511970000005', file: big.toString('base64') })).status, 200)
})

test('a base64 body sent without Content-Length (chunked) counts by its decoded size once decoded', async ({ t, files, authkey }) => {
  const slow = t.post('/api/create-message', { appkey: 'loja', authkey, to: '5511970000005', file: `${files.url}/lenta.png` })
  slow.catch(() => {}) // answered or not, the test says why it failed
  await lentaHeld(t, files, 3)
  const big = Buffer.alloc(3 * 1024 * 1024, 1)
  big.write('%PDF-1.4\n')
  const text = JSON.stringify({ appkey: 'loja', authkey, to: '5511970000005', file: big.toString('base64') })
  const chunked = () =>
    fetch(`${t.url}/api/create-message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new ReadableStream({ start: c => (c.enqueue(new TextEncoder().encode(text)), c.close()) }),
      duplex: 'half',
    } as RequestInit)
  const refused = await chunked()
  assert.is(refused.status, 429, '4 MB held by the download, 3 MB decoded on top is past 6 MB')
  assert.is(((await refused.json()) as { message: string }).message, BUSY)
  assert.is((await slow).status, 200)
  assert.is((await chunked()).status, 200)
})

test('a multipart body declaring more than bodyLimit is 413 at once: its lie never holds the budget while it trickles in', async ({ t, files, authkey }) => {
  // Before: the declared terabyte was held (alone, let through) for as long as the body took, up to bodyTimeoutMs, and every other media send was 429.
  const liar = request(`${t.url}/api/create-message`, {
    method: 'POST',
    headers: { 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(1e12) },
  })
  const answered = new Promise<number | undefined>(resolve =>
    liar.on('response', res => (res.resume(), resolve(res.statusCode))).on('error', () => resolve(undefined)),
  )
  liar.write('--x\r\n') // headers sent, the body only begun
  const status = await Promise.race([answered, new Promise(resolve => setTimeout(resolve, 1000, 'still reading'))])
  const other = await t.post('/api/create-message', { appkey: 'loja', authkey, to: '5511970000005', file: `${files.url}/rapida.png` })
  liar.destroy()
  assert.is(other.status, 200, 'another send is not refused 429 meanwhile')
  assert.is(status, 413)
})

test('a body declaring more than bodyLimit while the budget is busy is 413, final, never 429 to try again', async ({ t, files, authkey }) => {
  const slow = t.post('/api/create-message', { appkey: 'loja', authkey, to: '5511970000005', file: `${files.url}/lenta.png` })
  while (!files.requests.includes('/lenta.png')) await new Promise(resolve => setTimeout(resolve, 10))
  const tooLarge = String(20 * 1024 * 1024 + 1) // one byte past the default bodyLimit, 20 MB
  const answers: string[] = []
  for (const type of ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
    const socket = await openSocket(t.url)
    answers.push(await exchange(socket, `POST /api/create-message HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${type}\r\nContent-Length: ${tooLarge}\r\n\r\n`))
    socket.destroy()
  }
  assert.is((await slow).status, 200)
  for (const answer of answers) {
    assert.match(answer, /^HTTP\/1\.1 413 /, answer)
    assert.equal(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)), { status: 413, message: 'Corpo da requisição grande demais.' })
  }
})

test('mediaBytesInFlight must be a size above 0', async () => {
  await startGateway({ mediaBytesInFlight: 0 }).then(
    t => t.stop().then(() => assert.unreachable('should not start')),
    err => assert.match(String(err), /mediaBytesInFlight must be a size > 0/),
  )
})

test.run()

const MB = 1024 * 1024

/** A PNG of `bytes`: the tiny one padded after its end (sniffed as PNG). */
function pngOf(bytes: number): Buffer {
  return Buffer.concat([pngBytes(), Buffer.alloc(bytes - pngBytes().length)])
}

/** A tiny valid PNG. */
function pngBytes(): Buffer {
  return Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')
}
