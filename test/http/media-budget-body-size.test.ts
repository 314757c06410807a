import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { mediaHeld, startGateway, type TestGateway } from '../helpers/gateway.ts'
import { fileServer, type FileServer } from '../helpers/file-server.ts'

/**
 * A request body declared (Content-Length) at 64 KiB or more holds its size of the media budget while
 * the request lasts, one under it holds nothing: with a download in flight holding 40,000 of the
 * 100,000 bytes, a body of 65,536 or 99,999 bytes (five digits, like every size from 64 KiB to just
 * under 100 KB) is refused 429, one of 65,535 bytes is sent.
 */
const test = suite<{ t: TestGateway; files: FileServer; authkey: string }>('media budget: the body size from which a request holds it')
test.before(async ctx => {
  // 40,000 bytes declared at once, sent 1.5 s later: the download holds 40,000 bytes meanwhile.
  ctx.files = await fileServer({ '/lenta.png': { body: pngOf(40_000), type: 'image/png', bodyDelayMs: 1500 } })
  ctx.t = await startGateway({ allowPrivateUrls: true, mediaMaxBytes: 40_000, mediaBytesInFlight: 100_000, rateLimit: false })
  ctx.authkey = (await ctx.t.register()).authkey
  await ctx.t.linkedDevice(ctx.authkey, 'loja', '5511900000005')
})
test.after(async ctx => {
  await ctx.t.stop()
  await ctx.files.stop()
})

test('with a download holding 40,000 of 100,000 bytes, text bodies of 65,536 and 99,999 bytes are 429, one of 65,535 bytes is sent', async ({
  t,
  files,
  authkey,
}) => {
  const slow = t.post('/api/create-message', { appkey: 'loja', authkey, to: '5511970000005', file: `${files.url}/lenta.png` })
  while (!files.requests.includes('/lenta.png')) await new Promise(resolve => setTimeout(resolve, 10))
  await mediaHeld(t.gateway, 40_000) // its headers reached the gateway: its declared 40,000 bytes held
  const textOf = (bytes: number) => t.post('/api/create-message', bodyOf(bytes, { appkey: 'loja', authkey, to: '5511970000005' }))
  const [atThreshold, largest, under] = [await textOf(64 * 1024), await textOf(99_999), await textOf(64 * 1024 - 1)]
  assert.is((await slow).status, 200)
  assert.is(atThreshold.status, 429, 'a 65,536-byte body holds its size: 105,536 bytes is past the budget')
  assert.is(atThreshold.body.message, 'Servidor ocupado com outros arquivos. Tente novamente em instantes.')
  assert.is(largest.status, 429, 'a 99,999-byte body holds its size too')
  assert.is(under.status, 200, 'a 65,535-byte body holds nothing of the budget')
})

test.run()

/** A JSON body of exactly `bytes` bytes: `fields` and a text message padded to that size. */
function bodyOf(bytes: number, fields: Record<string, string>): Record<string, string> {
  const base = Buffer.byteLength(JSON.stringify({ ...fields, message: '' }))
  const body = { ...fields, message: 'a'.repeat(bytes - base) }
  assert.is(Buffer.byteLength(JSON.stringify(body)), bytes)
  return body
}

/** A PNG of `bytes`: the tiny one padded after its end (sniffed as PNG). */
function pngOf(bytes: number): Buffer {
  return Buffer.concat([pngBytes(), Buffer.alloc(bytes - pngBytes().length)])
}

/** A tiny valid PNG. */
function pngBytes(): Buffer {
  return Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')
}
