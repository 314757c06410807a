import { test } from 'uvu'
import * as assert from 'uvu/assert'
import Busboy from 'busboy'
import Koa from 'koa'
import { MemoryNetwork, memoryTransport } from '../../../adapters/transport-memory/index.ts'
import { signedHeaders } from '../../../src/http/forwarding/signature.ts'
import { inProcessCluster, linkedDeviceInCluster } from '../../helpers/cluster-in-process.ts'
import { listen, request } from '../../helpers/http.ts'
import { PNG } from '../../helpers/samples.ts'

/**
 * A forward's signature covers its JSON body; its uploads travel inside it (data URIs). A holder
 * whose host app parses multipart before the gateway (@koa/multer, koa-body) must not take files that
 * host parser found in a forwarded request: nothing signed them, so anyone on the instances' network
 * could add one to a forward on its way (its fields kept, as the signature needs) and have it sent.
 */

const FRIEND = '5511988887777'
const SECRET = 'a cluster secret of enough length' // inProcessCluster's

/** @koa/multer's shape with memory storage and `.any()`: fields in ctx.request.body, files in ctx.request.files. */
const multerLike: Koa.Middleware = async (ctx, next) => {
  if (!ctx.is('multipart')) return next()
  const fields: Record<string, string> = {}
  const files: unknown[] = []
  await new Promise<void>((resolve, reject) => {
    const parser = Busboy({ headers: ctx.req.headers })
    parser.on('field', (name, value) => (fields[name] = value))
    parser.on('file', (fieldname, stream, info) => {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => files.push({ fieldname, originalname: info.filename, mimetype: info.mimeType, buffer: Buffer.concat(chunks) }))
    })
    parser.on('close', resolve)
    parser.on('error', reject)
    ctx.req.pipe(parser)
  })
  ;(ctx.request as { body?: unknown; files?: unknown }).body = fields
  ;(ctx.request as { files?: unknown }).files = files
  return next()
}

test('a forward turned into multipart on its way, a file added beside its signed fields, is refused 403 by a holder whose host parses multipart: the file is never sent', async () => {
  const network = new MemoryNetwork()
  const [holder] = await inProcessCluster(1, () => ({ transport: memoryTransport({ network }) }))
  const app = new Koa()
  app.use(multerLike)
  app.use(holder!.gateway.routes())
  const hostApp = await listen(app)
  try {
    const { authkey } = await linkedDeviceInCluster([holder!], network, 'host-files@example.com')
    // A forward of a text send, as an instance signs it (the typed client's JSON: fields in this order).
    const fields = { authkey, appkey: 'loja', to: FRIEND, message: 'oi' }
    const body = Buffer.from(JSON.stringify(fields))
    const signed = signedHeaders(SECRET, {
      method: 'POST',
      path: '/api/create-message',
      timestamp: Date.now(),
      nonce: 'n-1',
      from: 'instance-a',
      to: holder!.id,
      body,
    })
    // On its way it becomes multipart: the same fields, and a file.
    const form = new FormData()
    for (const [name, value] of Object.entries(fields)) form.append(name, value)
    form.append('file', new Blob([PNG], { type: 'image/png' }), 'troca.png')
    const answer = await request(`${hostApp.url}/api/create-message`, { method: 'POST', headers: signed, body: form })
    assert.is(answer.status, 403, answer.text)
    assert.equal(network.inbox(FRIEND), [])

    // The forward as it was signed still works.
    const sent = await request(`${hostApp.url}/api/create-message`, {
      method: 'POST',
      headers: {
        ...signedHeaders(SECRET, {
          method: 'POST',
          path: '/api/create-message',
          timestamp: Date.now(),
          nonce: 'n-2',
          from: 'instance-a',
          to: holder!.id,
          body,
        }),
        'content-type': 'application/json',
      },
      body,
    })
    assert.is(sent.status, 200, sent.text)
    assert.equal(
      network.inbox(FRIEND).map(entry => entry.type),
      ['text'],
    )
  } finally {
    await hostApp.stop()
    await holder!.stop()
  }
})

test.run()
