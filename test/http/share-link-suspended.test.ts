import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startGateway, type TestGateway } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'
import { internalsOf } from '../../src/internals.ts'

/**
 * A suspended account's key is refused everywhere at once (docs/api.md, the host account API): its
 * QR share links must not link its devices either, or whoever holds a link would still bring a
 * device of the suspended account online. They answer as a revoked link, and again once resumed.
 */
const test = suite<{ t: TestGateway }>('QR share links of a suspended account')
test.before(async ctx => {
  ctx.t = await startGateway()
})
test.after(ctx => ctx.t.stop())

const GONE = { status: 404, message: 'Link inválido, expirado ou excluído.' }

test('answer 404 while the account is suspended (page and feed, no QR asked of the network), and show the QR again once it is resumed', async ({ t }) => {
  const { authkey, email } = await t.register()
  const answer = await t.post('/api/developer', { authkey, message: 'vitrine', conecteQR: 'true' })
  assert.is((await request(`${answer.body.link}/state`)).status, 200)

  await t.gateway.accounts.suspend(email)
  const state = await request(`${answer.body.link}/state`)
  assert.is(state.status, 404)
  assert.equal(state.body, GONE)
  const page = await request(answer.body.link)
  assert.is(page.status, 404)
  assert.not.ok(page.text.includes('data:image/png'), 'no QR on the page')
  // Nor does the feed offer one.
  assert.is((await request(`${answer.body.link}/state`)).body.qrcode, undefined)

  await t.gateway.accounts.resume(email)
  const back = await request(`${answer.body.link}/state`)
  assert.is(back.status, 200)
  assert.is(back.body.conectado, false)
  assert.match(back.body.qrcode, /^data:image\/png;base64,/)
})

test('answer 404 for an account whose plan has expired', async ({ t }) => {
  const { authkey, email } = await t.register()
  const answer = await t.post('/api/developer', { authkey, message: 'balcao', conecteQR: 'true' })
  assert.is((await request(`${answer.body.link}/state`)).status, 200)
  // Its last day in the past, as time would make it, by hand in the store (and every cached copy dropped).
  const { storage, epoch } = internalsOf(t.gateway)
  for await (const [key, value] of storage.list<{ email: string }>('account:'))
    if (value.email === email) await storage.set(key, { ...value, expiresOn: '2020-01-01' })
  await epoch.bump()
  assert.equal((await request(`${answer.body.link}/state`)).body, GONE)
})

test.run()
