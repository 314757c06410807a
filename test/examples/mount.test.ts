import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startHostApp } from '../../examples/mount-in-existing-app.ts'
import { post, request } from '../helpers/http.ts'

type Ctx = { host: Awaited<ReturnType<typeof startHostApp>> }
const mount = suite<Ctx>('examples/mount-in-existing-app.ts')
mount.before(async ctx => {
  ctx.host = await startHostApp(0)
})
mount.after(ctx => ctx.host.stop())

mount("serves the host's routes with the host's parser and error handler", async ({ host }) => {
  assert.equal((await request(`${host.url}/health`)).body, { ok: true })
  assert.equal((await post(`${host.url}/echo`, { a: 1 })).body, { youSent: { a: 1 } })
  assert.equal((await post(`${host.url}/echo`, { a: 'b' }, 'form')).body, { youSent: { a: 'b' } })
  const boom = await request(`${host.url}/boom`)
  assert.is(boom.status, 418)
  assert.equal(boom.body, { error: 'host failure', host: true })
})

mount('serves the gateway under /whatsapp with its own answers, beside the host routes', async ({ host }) => {
  const registered = await post(`${host.url}/whatsapp/api/auth`, {
    auth: 'registrar',
    nome: 'Host',
    email: 'host@example.com',
    senha: 'segredo1',
    telefone: '5511912345678',
    plano: '1',
  })
  assert.is(registered.status, 200)
  const authkey = registered.body.data.authkey
  const missing = await post(`${host.url}/whatsapp/api/developer`, { authkey })
  assert.equal(missing.body, { status: 401, message: 'validation.required' })
  const device = await post(`${host.url}/whatsapp/api/developer`, { authkey, message: 'host-device', conecteQR: 'true' }, 'form')
  assert.is(device.status, 200)
  assert.match(device.body.link, new RegExp(`^${host.url}/whatsapp/qr/`), 'links carry the mount prefix')
  assert.is((await request(device.body.link)).status, 200)
  const multipart = await post(`${host.url}/whatsapp/api/developer`, { authkey, message: 'host-device', checkDispositivo: 'true' }, 'multipart')
  assert.is(multipart.body.dispositivo.nome, 'host-device')
})

mount("a base64 media send over the host parser's default limits reaches the gateway and is sent", async ({ host }) => {
  const registered = await post(`${host.url}/whatsapp/api/auth`, {
    auth: 'registrar',
    nome: 'Media',
    email: 'media@example.com',
    senha: 'segredo1',
    telefone: '5511912345679',
    plano: '1',
  })
  const authkey = registered.body.data.authkey
  const device = await post(`${host.url}/whatsapp/api/developer`, { authkey, message: 'media-device', conecteQR: 'true' })
  await host.network.scan({ deviceId: device.body.id }, '5511912340000')
  const file = Buffer.alloc(1536 * 1024, 7).toString('base64') // 1.5 MB of bytes, 2 MB of JSON: over koa-bodyparser's 1 MB default
  const send = { appkey: 'media-device', authkey, to: '5511988880002', file, message: 'dados.bin' }
  const sent = await post(`${host.url}/whatsapp/api/create-message`, send)
  assert.equal([sent.status, sent.body.message], [200, 'Arquivo enviado.'])
  const form = await post(`${host.url}/whatsapp/api/create-message`, { ...send, file: Buffer.alloc(96 * 1024, 7).toString('base64') }, 'form')
  assert.equal([form.status, form.body.message], [200, 'Arquivo enviado.'], "a form body over koa-bodyparser's 56 KB default")
  assert.equal(host.network.inbox('5511988880002').length, 2)
})

mount("the gateway's errors never reach the host's error handler, and the host's parser failure stays the host's", async ({ host }) => {
  const bad = await request(`${host.url}/whatsapp/api/auth`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"auth":' })
  // The host's parser runs first on this app and fails: that is the host's answer, by design.
  assert.is(bad.status, 400)
  assert.equal(bad.body.host, true)
  const notFound = await request(`${host.url}/nowhere`)
  assert.is(notFound.status, 404)
})

mount.run()
