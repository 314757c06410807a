import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import QRCode from 'qrcode'
import { startGateway, waitFor, type TestGateway } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'
import { internalsOf } from '../../src/internals.ts'
import { hashKey } from '../../src/security/keys.ts'

type Ctx = { t: TestGateway; authkey: string }
const page = suite<Ctx>('QR share page')
page.before(async ctx => {
  ctx.t = await startGateway()
  ctx.authkey = (await ctx.t.register()).authkey
})
page.after(ctx => ctx.t.stop())

page('answers HTML showing the device QR while unlinked, with safe headers', async ({ t, authkey }) => {
  const answer = await t.post('/api/developer', { authkey, message: 'vitrine', conecteQR: 'true' })
  const html = await request(answer.body.link)
  assert.is(html.status, 200)
  assert.match(html.headers.get('content-type') ?? '', /text\/html/)
  assert.is(html.headers.get('cache-control'), 'no-store')
  assert.is(html.headers.get('referrer-policy'), 'no-referrer')
  assert.match(html.headers.get('content-security-policy') ?? '', /default-src 'none'/)
  assert.ok(html.text.includes(answer.body.qrcode), 'the page embeds the QR the API returned')
  assert.ok(html.text.includes('Conectar vitrine'))
})

page('the state feed follows the device (current QR, then connected) and never shows its phone number', async ({ t, authkey }) => {
  const answer = await t.post('/api/developer', { authkey, message: 'balcao', conecteQR: 'true' })
  const before = await request(`${answer.body.link}/state`)
  assert.equal(before.body, { conectado: false, qrcode: answer.body.qrcode })
  await t.network.scan({ deviceId: answer.body.id }, '5511933334444')
  await waitFor(async () => (await request(`${answer.body.link}/state`)).body.conectado === true)
  const after = await request(`${answer.body.link}/state`)
  assert.equal(after.body, { conectado: true, qrcode: null }, 'whoever holds the link may not own the account: only what linking needs')
  const html = await request(answer.body.link)
  assert.ok(html.text.includes('"conectado":true'))
  assert.not.ok(html.text.includes('5511933334444'), 'the page does not carry the phone number either')
})

page('an expired QR is replaced by a fresh one from the network when the page asks', async ({ t, authkey }) => {
  const answer = await t.post('/api/developer', { authkey, message: 'expira', conecteQR: 'true' })
  await internalsOf(t.gateway).storage.delete(`qr:${answer.body.id}`) // the QR's store TTL ran out
  const state = await request(`${answer.body.link}/state`)
  assert.match(state.body.qrcode, /^data:image\/png;base64,/)
  assert.is.not(state.body.qrcode, answer.body.qrcode)
  const current = await internalsOf(t.gateway).links.currentQr(answer.body.id)
  assert.is(state.body.qrcode, await QRCode.toDataURL(current!, { margin: 2, scale: 6 }))
})

page('answers 404 for an unknown token and after GerenciarLinks excluir; a new link works again', async ({ t, authkey }) => {
  assert.is((await request(`${t.url}/qr/unknown-token`)).status, 404)
  const answer = await t.post('/api/developer', { authkey, message: 'revogar', conecteQR: 'true' })
  const second = await t.post('/api/developer', { authkey, message: 'revogar', conecteQR: 'true' })
  await t.post('/api/developer', { authkey, appkey: 'revogar', message: 'false', to: 'revogar', GerenciarLinks: 'excluir' })
  for (const link of [answer.body.link, second.body.link]) {
    assert.is((await request(link)).status, 404)
    assert.is((await request(`${link}/state`)).status, 404)
  }
  const third = await t.post('/api/developer', { authkey, message: 'revogar', conecteQR: 'true' })
  assert.is((await request(third.body.link)).status, 200)
})

page('a deleted device takes its links with it', async ({ t, authkey }) => {
  const answer = await t.post('/api/developer', { authkey, message: 'some', conecteQR: 'true' })
  await t.post('/api/developer', { authkey, message: 'some', apagarDispositivo: 'true' })
  assert.is((await request(answer.body.link)).status, 404)
})

page("a deleted device leaves none of its links' spent marks in the store", async ({ t, authkey }) => {
  const answer = await t.post('/api/developer', { authkey, message: 'gasto', conecteQR: 'true' })
  const { storage } = internalsOf(t.gateway)
  const spentKey = `share-link-spent:${hashKey(new URL(answer.body.link).pathname.split('/').at(-1)!)}`
  await t.network.scan({ deviceId: answer.body.id }, '5511933335555')
  await waitFor(async () => (await storage.get(spentKey)) === true, 5000, 'the link spent once the device connected')
  await t.post('/api/developer', { authkey, message: 'gasto', apagarDispositivo: 'true' })
  assert.is(await storage.get(spentKey), undefined)
})

page.run()
