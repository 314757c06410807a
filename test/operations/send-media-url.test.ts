import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { fileServer, type FileServer } from '../helpers/file-server.ts'
import { FRIEND, assertError, assertOk, inbox, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'
import { freePort } from '../helpers/standalone.ts'
import { CFB, PDF, PNG } from '../helpers/samples.ts'

const test = suite<{ g: SendingGateway; files: FileServer }>('operation 9: send media from a URL')

test.before.each(async ctx => {
  ctx.files = await fileServer({
    '/images/produto.png': { body: PNG, type: 'image/png' },
    '/docs/manual': { body: PDF, type: 'application/octet-stream' },
    '/big.bin': { body: Buffer.alloc(70 * 1024, 1), type: 'application/octet-stream' },
    '/big-chunked.bin': { body: Buffer.alloc(70 * 1024, 1), chunked: true },
    '/slow.png': { body: PNG, type: 'image/png', delayMs: 60_000 }, // answers long after any test here ends
    '/gone.png': { body: Buffer.from('gone'), status: 410 },
    '/empty.png': { body: Buffer.alloc(0), type: 'image/png' },
    '/empty-chunked.pdf': { body: Buffer.alloc(0), chunked: true },
    '/no-content': { body: Buffer.alloc(0), status: 204 },
    '/relatorio.doc': { body: CFB, type: 'application/msword' },
    '/download.php': { body: PDF, type: 'application/pdf' },
    '/express': {
      body: PDF,
      type: 'application/pdf',
      headers: { 'content-disposition': `attachment; filename="??.pdf"; filename*=UTF-8''%E6%8A%A5%E5%91%8A.pdf` },
    },
    '/fatura%E2%80%AEfdp.exe': { body: PDF, type: 'application/pdf' },
    '/rlo': { body: PDF, type: 'application/pdf', headers: { 'content-disposition': `attachment; filename*=UTF-8''invoice%E2%80%AEfdp.exe` } },
    '/php': { body: PDF, type: 'application/pdf', headers: { 'content-disposition': `attachment; filename="${latin1('relatório de ações.pdf')}"` } },
  })
})
test.after.each(async ctx => {
  await ctx.g?.stop()
  await ctx.files.stop()
})

test('send media downloads a URL of a local server when allowPrivateUrls is on', async ctx => {
  ctx.g = await sendingGateway({ allowPrivateUrls: true, mediaMaxBytes: 64 * 1024 })
  const body = assertOk(await ctx.g.send({ to: FRIEND, file: `${ctx.files.url}/images/produto.png`, descricao: 'Novo' }))
  assert.deepEqual(inbox(ctx.g.network, FRIEND), [
    { id: body.id, from: '5511999990001', type: 'image', caption: 'Novo', fileName: 'produto.png', mimetype: 'image/png', bytes: PNG.length },
  ])
})

test('send media from a URL sniffs the bytes when the server says octet-stream', async ctx => {
  ctx.g = await sendingGateway({ allowPrivateUrls: true })
  assertOk(await ctx.g.send({ to: FRIEND, file: `${ctx.files.url}/docs/manual` }))
  const [entry] = inbox(ctx.g.network, FRIEND)
  assert.equal(entry.type, 'document')
  assert.equal(entry.mimetype, 'application/pdf')
  assert.equal(entry.fileName, 'manual.pdf')
})

test('send media keeps the document type a .doc (an OLE file, sniffed only as its container) is served or named as, and names a PDF from a script URL .pdf', async ctx => {
  ctx.g = await sendingGateway({ allowPrivateUrls: true })
  assertOk(await ctx.g.send({ to: FRIEND, file: `${ctx.files.url}/relatorio.doc` }))
  assertOk(await ctx.g.send({ to: FRIEND, file: CFB.toString('base64'), message: 'contrato.doc' }))
  assertOk(await ctx.g.send({ to: FRIEND, file: `data:application/msword;base64,${CFB.toString('base64')}`, message: 'contrato' }))
  assertOk(await ctx.g.send({ to: FRIEND, file: `${ctx.files.url}/download.php?id=42` }))
  assert.deepEqual(
    inbox(ctx.g.network, FRIEND).map(entry => [entry.type, entry.fileName, entry.mimetype]),
    [
      ['document', 'relatorio.doc', 'application/msword'],
      ['document', 'contrato.doc', 'application/msword'],
      ['document', 'contrato.doc', 'application/msword'],
      ['document', 'download.php.pdf', 'application/pdf'],
    ],
  )
})

test('send media names a file from its Content-Disposition as browsers do: filename* first (the ASCII fallback beside it is no name), raw UTF-8 in filename read as UTF-8', async ctx => {
  ctx.g = await sendingGateway({ allowPrivateUrls: true })
  assertOk(await ctx.g.send({ to: FRIEND, file: `${ctx.files.url}/express` }))
  assertOk(await ctx.g.send({ to: FRIEND, file: `${ctx.files.url}/php` }))
  assert.deepEqual(
    inbox(ctx.g.network, FRIEND).map(entry => entry.fileName),
    ['报告.pdf', 'relatório de ações.pdf'],
  )
})

test("send media drops bidirectional controls from a URL's file name (Content-Disposition or last path segment)", async ctx => {
  ctx.g = await sendingGateway({ allowPrivateUrls: true })
  assertOk(await ctx.g.send({ to: FRIEND, file: `${ctx.files.url}/rlo` }))
  assertOk(await ctx.g.send({ to: FRIEND, file: `${ctx.files.url}/fatura%E2%80%AEfdp.exe` }))
  assert.deepEqual(
    inbox(ctx.g.network, FRIEND).map(entry => entry.fileName),
    ['invoicefdp.exe.pdf', 'faturafdp.exe.pdf'],
  )
})

test('send media refuses a loopback URL without allowPrivateUrls, with 400 and a clear message, and never fetches it', async ctx => {
  ctx.g = await sendingGateway()
  for (const url of [
    `${ctx.files.url}/images/produto.png`,
    'http://localhost/x.png',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]/x.png',
    'http://2130706433/x.png',
  ]) {
    assertError(await ctx.g.send({ to: FRIEND, file: url }), 400, 'URL do arquivo não permitida: use http(s) de um endereço público.')
  }
  assert.deepEqual(ctx.files.requests, [])
  assert.deepEqual(ctx.g.network.inbox(FRIEND), [])
})

test('send media refuses a download over mediaMaxBytes with 413, announced or streamed', async ctx => {
  ctx.g = await sendingGateway({ allowPrivateUrls: true, mediaMaxBytes: 64 * 1024 })
  assertError(await ctx.g.send({ to: FRIEND, file: `${ctx.files.url}/big.bin` }), 413, 'Arquivo maior que o limite permitido. (0.1 MB)')
  assertError(await ctx.g.send({ to: FRIEND, file: `${ctx.files.url}/big-chunked.bin` }), 413, 'Arquivo maior que o limite permitido. (0.1 MB)')
  assert.deepEqual(ctx.g.network.inbox(FRIEND), [])
})

test('send media answers 400 with the HTTP status when the file server answers an error', async ctx => {
  ctx.g = await sendingGateway({ allowPrivateUrls: true })
  assertError(await ctx.g.send({ to: FRIEND, file: `${ctx.files.url}/missing.png` }), 400, 'O servidor do arquivo respondeu com erro. (HTTP 404)')
  assertError(await ctx.g.send({ to: FRIEND, file: `${ctx.files.url}/gone.png` }), 400, 'O servidor do arquivo respondeu com erro. (HTTP 410)')
})

test('send media answers 400 when the file server answers success with no bytes (200 empty, chunked or 204), never 401 validation.required', async ctx => {
  ctx.g = await sendingGateway({ allowPrivateUrls: true })
  for (const path of ['/empty.png', '/empty-chunked.pdf', '/no-content']) {
    assertError(await ctx.g.send({ to: FRIEND, file: `${ctx.files.url}${path}` }), 400, 'O servidor do arquivo respondeu com erro. (arquivo vazio)')
  }
  const cards = [{ image_url: `${ctx.files.url}/empty.png`, title: 'Pizza', buttons: [{ type: 'quickReplyButton', displaytext: 'Quero', id: 'q' }] }]
  assertError(await ctx.g.send({ to: FRIEND, message: 'Ofertas', cards }), 400, 'O servidor do arquivo respondeu com erro. (arquivo vazio)')
  assert.deepEqual(ctx.g.network.inbox(FRIEND), [])
})

test('send media answers 400 when the download times out or the server is unreachable', async ctx => {
  ctx.g = await sendingGateway({ allowPrivateUrls: true, mediaTimeoutMs: 300 })
  // The server takes a minute: the time-out answers, not the server.
  assertError(await ctx.g.send({ to: FRIEND, file: `${ctx.files.url}/slow.png` }), 400, 'Tempo esgotado ao baixar o arquivo da URL.')
  const port = await freePort()
  assertError(await ctx.g.send({ to: FRIEND, file: `http://127.0.0.1:${port}/x.png` }), 400, 'Não foi possível baixar o arquivo da URL.')
})

test.run()

// --- Internal helpers ---

/** A header value carrying `text` as its UTF-8 bytes (what a PHP script writing a UTF-8 name sends). */
function latin1(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1')
}
