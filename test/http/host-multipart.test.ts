import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import Busboy from 'busboy'
import Koa from 'koa'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createGateway, type Gateway } from '../../src/index.ts'
import { MemoryNetwork, memoryTransport } from '../../adapters/transport-memory/index.ts'
import { listen, post, type Answer } from '../helpers/http.ts'
import { waitFor } from '../helpers/gateway.ts'
import { tempDir } from '../helpers/standalone.ts'
import { PNG } from '../helpers/samples.ts'

/**
 * A host app whose own multipart parser reads the body before the gateway (koa-body, @koa/multer):
 * the gateway takes the files from where that parser put them. Before, it saw the fields alone, so a
 * send-file `{ message: "foto.png", file: <part> }` selected the text send and texted "foto.png".
 */
const test = suite<{ stop?: () => Promise<void> }>('a host multipart parser: the gateway reads its files')
test.after.each(async ctx => {
  await ctx.stop?.()
})

const FRIEND = '5511988880002'

/** A file as a host parser left it: the field, its name, type and bytes. */
interface Parsed {
  field: string
  filename: string
  mimeType: string
  data: Buffer
}

/** A host middleware parsing multipart with busboy, then leaving fields in ctx.request.body and files as `shape` says. */
function hostParser(shape: (files: Parsed[], ctx: Koa.Context) => void): Koa.Middleware {
  return async (ctx, next) => {
    if (!ctx.is('multipart')) return next()
    const fields: Record<string, string> = {}
    const files: Parsed[] = []
    await new Promise<void>((resolve, reject) => {
      const parser = Busboy({ headers: ctx.req.headers })
      parser.on('field', (name, value) => (fields[name] = value))
      parser.on('file', (field, stream, info) => {
        const chunks: Buffer[] = []
        stream.on('data', (chunk: Buffer) => chunks.push(chunk))
        stream.on('end', () => files.push({ field, filename: info.filename ?? '', mimeType: info.mimeType, data: Buffer.concat(chunks) }))
      })
      parser.on('close', resolve)
      parser.on('error', reject)
      ctx.req.pipe(parser)
    })
    ;(ctx.request as { body?: unknown }).body = fields
    shape(files, ctx)
    return next()
  }
}

/** koa-body's (formidable's) shape: `ctx.request.files = { field: File }`, each written to a temporary file. */
const koaBodyShape = (dir: string) => (files: Parsed[], ctx: Koa.Context) => {
  const byField: Record<string, unknown> = {}
  files.forEach((file, i) => {
    const filepath = join(dir, `upload-${i}`)
    writeFileSync(filepath, file.data)
    byField[file.field] = { filepath, originalFilename: file.filename, mimetype: file.mimeType, size: file.data.length, newFilename: `upload-${i}` }
  })
  ;(ctx.request as { files?: unknown }).files = byField
}

/** @koa/multer's shape with memory storage and `.any()`: `ctx.request.files` and `ctx.files`, a list naming each file's field. */
const multerShape = (files: Parsed[], ctx: Koa.Context) => {
  const list = files.map(file => ({
    fieldname: file.field,
    originalname: file.filename,
    encoding: '7bit',
    mimetype: file.mimeType,
    size: file.data.length,
    buffer: file.data,
  }))
  ;(ctx.request as { files?: unknown }).files = list
  ;(ctx as { files?: unknown }).files = list
}

/** A gateway behind `parser`, with a linked device: its URL, network and keys. */
async function hostWith(ctx: { stop?: () => Promise<void> }, parser: Koa.Middleware, options: { bodyLimit?: number } = {}) {
  const network = new MemoryNetwork()
  const gateway: Gateway = await createGateway({ transport: memoryTransport({ network }), rateLimit: false, ...options })
  const app = new Koa()
  app.use(parser)
  app.use(gateway.routes())
  const server = await listen(app)
  ctx.stop = async () => {
    await server.stop()
    await gateway.close()
  }
  const registered = await post(`${server.url}/api/auth`, {
    auth: 'registrar',
    nome: 'Host',
    email: `host-${process.pid}-${Date.now()}@example.com`,
    senha: 'senha-secreta',
    telefone: '5511999990000',
    plano: '1',
  })
  const authkey = registered.body.data.authkey as string
  const device = await post(`${server.url}/api/v2/qrcode`, { authkey, setAppkey: 'loja' })
  await network.scan({ deviceId: device.body.id }, '5511999990001')
  await network.settled()
  await waitFor(
    async () => (await post(`${server.url}/api/developer`, { authkey, message: 'loja', checkDispositivo: 'true' })).body?.dispositivo?.conectado === true,
  )
  const send = (body: Record<string, unknown>): Promise<Answer> =>
    post(`${server.url}/api/create-message`, { appkey: 'loja', authkey, to: FRIEND, ...body }, 'multipart')
  const sendFile = (file: File, extra: Record<string, unknown> = {}) => send({ message: file.name, file, ...extra })
  return { network, send, sendFile }
}

for (const [name, parser] of [
  ['koa-body (formidable: files on disk by field)', () => hostParser(koaBodyShape(tempDir('zapgate-host-files-')))],
  ['@koa/multer (memory storage, .any(): a list with buffers)', () => hostParser(multerShape)],
] as const) {
  test(`${name}: a send-file is sent as the file, not its name as a text`, async ctx => {
    const { network, sendFile } = await hostWith(ctx, parser())
    const answer = await sendFile(new File([PNG], 'foto.png', { type: 'image/png' }), { descricao: 'Nossa loja' })
    assert.is(answer.status, 200, answer.text)
    assert.is(answer.body.message, 'Arquivo enviado.')
    const last = network.inbox(FRIEND).at(-1) as Record<string, unknown>
    assert.is(last.id, answer.body.id)
    assert.is(last.type, 'image', 'the image reached the contact')
    assert.is(last.bytes, PNG.length, 'whole')
    assert.is(last.fileName, 'foto.png')
    assert.is(last.caption, 'Nossa loja')
  })

  test(`${name}: a file input left empty (no file name, no bytes) is no file: the text is sent`, async ctx => {
    const { network, send } = await hostWith(ctx, parser())
    const answer = await send({ message: 'Olá', file: new File([], '') })
    assert.is(answer.status, 200, answer.text)
    assert.is(answer.body.message, 'Mensagem de texto enviada.')
    assert.is((network.inbox(FRIEND).at(-1) as { text?: string }).text, 'Olá')
  })
}

test('koa-body: a file part the client named "filepath" or "buffer" is one more upload, not taken for the container of files', async ctx => {
  const { network, sendFile } = await hostWith(ctx, hostParser(koaBodyShape(tempDir('zapgate-host-files-'))))
  const extra = new File([Buffer.from('x')], 'x.txt', { type: 'text/plain' })
  const answer = await sendFile(new File([PNG], 'foto.png', { type: 'image/png' }), { filepath: extra, buffer: extra })
  assert.is(answer.status, 200, answer.text)
  assert.is(answer.body.message, 'Arquivo enviado.')
  assert.is((network.inbox(FRIEND).at(-1) as Record<string, unknown>).bytes, PNG.length)
})

test("a host file the gateway cannot read (no bytes, no path): 415, nothing sent (not the file's name as a text)", async ctx => {
  const { network, sendFile } = await hostWith(
    ctx,
    hostParser(
      (files, c) => void ((c.request as { files?: unknown }).files = Object.fromEntries(files.map(f => [f.field, { url: 'https://bucket.example/x' }]))),
    ),
  )
  const answer = await sendFile(new File([PNG], 'foto.png', { type: 'image/png' }))
  assert.is(answer.status, 415)
  assert.is(answer.body.message, 'Tipo de conteúdo não suportado.')
  assert.equal(network.inbox(FRIEND), [])
})

test("a host file larger than the gateway's body limit: 413, nothing sent", async ctx => {
  const { network, sendFile } = await hostWith(ctx, hostParser(multerShape), { bodyLimit: 64 * 1024 })
  const answer = await sendFile(new File([Buffer.alloc(100 * 1024, 1)], 'grande.bin'))
  assert.is(answer.status, 413)
  assert.is(answer.body.message, 'Corpo da requisição grande demais.')
  assert.equal(network.inbox(FRIEND), [])
})

test('a host that parsed a multipart body without files: its fields alone, as before', async ctx => {
  const { network, send } = await hostWith(ctx, hostParser(multerShape))
  const answer = await send({ message: 'Olá' })
  assert.is(answer.status, 200, answer.text)
  assert.is(answer.body.message, 'Mensagem de texto enviada.')
  assert.is((network.inbox(FRIEND).at(-1) as { text?: string }).text, 'Olá')
})

test.run()
