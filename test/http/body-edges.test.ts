import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { request as httpRequest } from 'node:http'
import { gatewayWithDevice, type TestGateway } from '../helpers/gateway.ts'
import { sendRaw } from '../fuzz/harness.ts'
import { exchange, openSocket, rawPost } from '../helpers/raw-http.ts'

type Ctx = { t: TestGateway; authkey: string }
/** The body limits at their edges (docs/limits.md: the limit is accepted, one byte or one file past it refused 413) and the encodings a body may come in. */
const test = suite<Ctx>('request bodies at their limits')
const LIMIT = 64 * 1024
test.before(async ctx => {
  Object.assign(ctx, await gatewayWithDevice({ bodyLimit: '64kb' }))
})
test.after(ctx => ctx.t.stop())

const bodyOf = (authkey: string, size: number) => {
  const base = JSON.stringify({ authkey, message: '', checkDispositivo: 'true' })
  return JSON.stringify({ authkey, message: 'x'.repeat(size - base.length), checkDispositivo: 'true' })
}
function chunked(url: string, body: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers }, res => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', reject)
    req.write(body.slice(0, 10))
    req.end(body.slice(10))
  })
}
test('a JSON body of exactly bodyLimit bytes is read (not 413)', async ({ t, authkey }) => {
  const body = bodyOf(authkey, LIMIT)
  assert.is(Buffer.byteLength(body), LIMIT)
  const a = await sendRaw(`${t.url}/api/developer`, body, { 'content-type': 'application/json' })
  assert.is.not(a.status, 413, a.text)
})
test('a chunked JSON body of bodyLimit + 1 bytes is 413', async ({ t, authkey }) => {
  const body = bodyOf(authkey, LIMIT + 1)
  assert.is(await chunked(`${t.url}/api/developer`, body, { 'content-type': 'application/json' }), 413)
})
test('an unknown Content-Encoding is 415, not a 400 of a body read as it came', async ({ t }) => {
  const a = await sendRaw(`${t.url}/api/auth`, 'a=1', { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'compress' })
  assert.is(a.status, 415, a.text)
})
test('a multipart body of 21 files is 413', async ({ t, authkey }) => {
  const form = new FormData()
  form.append('authkey', authkey)
  form.append('message', 'loja')
  form.append('checkDispositivo', 'true')
  for (let i = 0; i < 21; i++) form.append(`f${i}`, new File([Buffer.from('abc')], `f${i}.txt`))
  const res = await fetch(`${t.url}/api/developer`, { method: 'POST', body: form })
  assert.is(res.status, 413, await res.text())
})
test('a multipart body of 20 files is read', async ({ t, authkey }) => {
  const form = new FormData()
  form.append('authkey', authkey)
  form.append('message', 'loja')
  form.append('checkDispositivo', 'true')
  for (let i = 0; i < 20; i++) form.append(`f${i}`, new File([Buffer.from('abc')], `f${i}.txt`))
  const res = await fetch(`${t.url}/api/developer`, { method: 'POST', body: form })
  assert.is.not(res.status, 413)
})
test('a gzip-compressed JSON body is read', async ({ t, authkey }) => {
  const { gzipSync } = await import('node:zlib')
  const a = await sendRaw(`${t.url}/api/developer`, gzipSync(JSON.stringify({ authkey, message: 'loja', checkDispositivo: 'true' })), {
    'content-type': 'application/json',
    'content-encoding': 'gzip',
  })
  assert.is(a.status, 200, a.text)
})

test('a Content-Encoding is read whatever its case (RFC 9110: content codings are case-insensitive): JSON, form and multipart alike', async ({
  t,
  authkey,
}) => {
  const { gzipSync } = await import('node:zlib')
  const part = (name: string, value: string) => `--B\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`
  const fields = { authkey, message: 'loja', checkDispositivo: 'true' }
  const bodies = {
    'application/json': Buffer.from(JSON.stringify(fields)),
    'application/x-www-form-urlencoded': Buffer.from(new URLSearchParams(fields).toString()),
    'multipart/form-data; boundary=B': Buffer.from(part('authkey', authkey) + part('message', 'loja') + part('checkDispositivo', 'true') + '--B--\r\n'),
  }
  for (const [type, body] of Object.entries(bodies))
    for (const [encoding, bytes] of [
      ['GZIP', gzipSync(body)],
      ['Gzip', gzipSync(body)],
      ['Identity', body],
      ['IDENTITY', body],
    ] as const) {
      const read = await sendRaw(`${t.url}/api/developer`, bytes, { 'content-type': type, 'content-encoding': encoding })
      assert.is(read.status, 200, `${type}, ${encoding}: ${read.text}`)
      assert.is(read.body.dispositivo.nome, 'loja', `${type}, ${encoding}`)
    }
})

test('a multipart body is read in its Content-Encoding as JSON and forms are: gzip, deflate and br decoded, an unknown one 415 (never read as it came)', async ({
  t,
  authkey,
}) => {
  const { brotliCompressSync, deflateSync, gzipSync } = await import('node:zlib')
  const part = (name: string, value: string) => `--B\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`
  const multipart = Buffer.from(part('authkey', authkey) + part('message', 'loja') + part('checkDispositivo', 'true') + '--B--\r\n')
  const send = (encoding: string, body: Buffer) =>
    sendRaw(`${t.url}/api/developer`, body, { 'content-type': 'multipart/form-data; boundary=B', 'content-encoding': encoding })
  for (const [encoding, body] of [
    ['gzip', gzipSync(multipart)],
    ['deflate', deflateSync(multipart)],
    ['br', brotliCompressSync(multipart)],
  ] as const) {
    const read = await send(encoding, body)
    assert.is(read.status, 200, `${encoding}: ${read.text}`)
    assert.is(read.body.dispositivo.nome, 'loja')
  }
  const unknown = await send('compress', multipart)
  assert.equal([unknown.status, unknown.body], [415, { status: 415, message: 'Tipo de conteúdo não suportado.' }], 'an unknown encoding')
  const mislabelled = await send('gzip', multipart)
  assert.equal([mislabelled.status, mislabelled.body], [400, { status: 400, message: 'Corpo da requisição inválido.' }], 'bytes that are not gzip')
})

test('a compressed multipart body that decodes past bodyLimit is 413, the bytes before its first part counted too (no decompression bomb)', async ({
  t,
  authkey,
}) => {
  const { gzipSync } = await import('node:zlib')
  const part = (name: string, value: string) => `--B\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`
  const fields = part('authkey', authkey) + part('message', 'loja') + part('checkDispositivo', 'true') + '--B--\r\n'
  // 16 MiB of zeros before the first boundary (a preamble the parser skips) compress to about 16 KiB, well inside the limit.
  const bomb = gzipSync(Buffer.concat([Buffer.alloc(16 * 1024 * 1024), Buffer.from(`\r\n${fields}`)]))
  assert.ok(bomb.length < LIMIT)
  const answer = await sendRaw(`${t.url}/api/developer`, bomb, { 'content-type': 'multipart/form-data; boundary=B', 'content-encoding': 'gzip' })
  assert.equal([answer.status, answer.body], [413, { status: 413, message: answer.body.message }], answer.text)
  // Not compressed, chunked (no Content-Length to refuse it by): the same preamble is counted as it comes.
  const chunkedAnswer = await chunked(`${t.url}/api/developer`, `${'x'.repeat(2 * LIMIT)}\r\n${fields}`, { 'content-type': 'multipart/form-data; boundary=B' })
  assert.is(chunkedAnswer, 413)
})

test('a multipart body of exactly bodyLimit bytes is read; one declared a byte over is 413 at once', async ({ t, authkey }) => {
  const multipart = (size: number) => {
    const part = (name: string, value: string) => `--B\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`
    const head = part('authkey', authkey) + part('message', 'loja') + part('checkDispositivo', 'true')
    const empty = head + part('x', '') + '--B--\r\n'
    return head + part('x', 'x'.repeat(size - Buffer.byteLength(empty))) + '--B--\r\n'
  }
  const type = { 'content-type': 'multipart/form-data; boundary=B' }
  assert.is(Buffer.byteLength(multipart(LIMIT)), LIMIT)
  const atLimit = await sendRaw(`${t.url}/api/developer`, multipart(LIMIT), type)
  assert.is.not(atLimit.status, 413, atLimit.text)
  assert.is((await sendRaw(`${t.url}/api/developer`, multipart(LIMIT + 1), type)).status, 413)
})

test('a body refused 413 part-way (a form, JSON in Latin-1, gzip) leaves its kept-alive connection able to carry the next request', async ({ t, authkey }) => {
  const { gzipSync } = await import('node:zlib')
  const { randomBytes } = await import('node:crypto')
  const big = 'x'.repeat(1024 * 1024)
  const bodies: [string, Buffer, string][] = [
    ['application/x-www-form-urlencoded', Buffer.from(`authkey=${authkey}&message=${big}`), ''],
    ['application/json; charset=iso-8859-1', Buffer.from(JSON.stringify({ authkey, message: big })), ''],
    ['application/json', gzipSync(JSON.stringify({ authkey, message: randomBytes(1024 * 1024).toString('base64') })), 'Content-Encoding: gzip\r\n'],
  ]
  for (const [type, body, encoding] of bodies) {
    const socket = await openSocket(t.url)
    try {
      const head = `POST /api/developer HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${type}\r\n${encoding}Transfer-Encoding: chunked\r\n\r\n`
      const refused = await exchange(socket, Buffer.concat([Buffer.from(`${head}${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]))
      assert.match(refused, /^HTTP\/1\.1 413 /, type)
      const next = exchange(socket, rawPost('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' }))
      let timer: NodeJS.Timeout | undefined
      const hung = new Promise<string>(resolve => (timer = setTimeout(resolve, 10_000, 'no answer within 10 s')))
      const answer = await Promise.race([next, hung]).finally(() => clearTimeout(timer))
      assert.match(answer, /^HTTP\/1\.1 200 /, `${type}${encoding ? ' (gzip)' : ''}: the next request on the connection`)
    } finally {
      socket.destroy()
    }
  }
})

test.run()
