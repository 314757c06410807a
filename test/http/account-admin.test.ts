import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { rejects } from 'node:assert/strict'
import { GatewayError } from '../../src/errors.ts'
import { dateInZone } from '../../src/domain/clock.ts'
import { internalsOf } from '../../src/internals.ts'
import { accountAdmin, type Plan } from '../../src/index.ts'
import { startGateway, type TestGateway } from '../helpers/gateway.ts'

const test = suite<{ t: TestGateway }>('the host account API (gateway.accounts): renew, rotate a key, suspend and resume')

test.before.each(async ctx => {
  ctx.t = await startGateway({ rateLimit: false })
})
test.after.each(async ctx => {
  await ctx.t.stop()
})

const status = (t: TestGateway, authkey: string) => t.post('/api/developer', { authkey, message: 'nada', checkDispositivo: 'true' })
/** 404 (no such device) means the key was accepted; 401 that it was refused. */
const accepted = async (t: TestGateway, authkey: string) => (await status(t, authkey)).status === 404

test('rotateKey(email) answers a new authkey: the old one is refused at once, the new one works', async ({ t }) => {
  const { authkey, email } = await t.register()
  assert.ok(await accepted(t, authkey), 'warm: the old key is cached')
  const rotated = await t.gateway.accounts.rotateKey(email)
  assert.equal((await status(t, authkey)).body, { status: 401, message: 'validation.required' })
  assert.ok(await accepted(t, rotated.authkey))
  assert.is(rotated.account.email, email)
  assert.not.ok('authkeyHash' in rotated.account || 'passwordHash' in rotated.account, 'no secret in the summary')
})

test('suspend(email) refuses the key everywhere until resume(email)', async ({ t }) => {
  const { authkey, email } = await t.register()
  assert.ok(await accepted(t, authkey))
  assert.is((await t.gateway.accounts.suspend(email)).suspended, true)
  assert.is((await status(t, authkey)).status, 401)
  const sent = await t.post('/api/create-message', { authkey, appkey: 'x', to: '5511988880002', message: 'oi' })
  assert.equal(sent.body, { status: 401, message: 'validation.required' })
  assert.is((await t.gateway.accounts.resume(email)).suspended, false)
  assert.ok(await accepted(t, authkey))
})

test('renew(email) gives an expired account a new expiracao from today; a live one from its last day', async ({ t }) => {
  const { authkey, email } = await t.register()
  const { storage } = internalsOf(t.gateway)
  const account = (await t.gateway.accounts.get(email))!
  assert.is(account.expiresOn, dateInZone('UTC', 30))
  const renewed = await t.gateway.accounts.renew(email)
  assert.is(renewed.expiresOn, dateInZone('UTC', 60), 'thirty more days after the current last day')
  // Expire it by hand, as 30 days would.
  for await (const [key, value] of storage.list<{ email: string }>('account:'))
    if (value.email === email) await storage.set(key, { ...value, expiresOn: '2020-01-01' })
  await internalsOf(t.gateway).epoch.bump()
  assert.is((await status(t, authkey)).status, 401, 'expired')
  assert.is((await t.gateway.accounts.renew(email, '1')).expiresOn, dateInZone('UTC', 29), 'thirty days counting today')
  assert.ok(await accepted(t, authkey))
})

test('an unknown e-mail is account-not-found, an unknown plan invalid-input (and nothing changes)', async ({ t }) => {
  const { email } = await t.register()
  await rejects(
    () => t.gateway.accounts.renew('nobody@example.com'),
    (err: unknown) => err instanceof GatewayError && err.code === 'account-not-found',
  )
  await rejects(
    () => t.gateway.accounts.rotateKey('nobody@example.com'),
    (err: unknown) => err instanceof GatewayError && err.code === 'account-not-found',
  )
  const before = await t.gateway.accounts.get(email)
  await rejects(
    () => t.gateway.accounts.renew(email, '99'),
    (err: unknown) => err instanceof GatewayError && err.code === 'invalid-input',
  )
  assert.equal(await t.gateway.accounts.get(email), before)
  assert.is(await t.gateway.accounts.get('nobody@example.com'), undefined)
})

test('accountAdmin({ storage, plans, timeZone }) takes plans and timeZone null (a JSON config\'s "not set") as not given, as createGateway does', async ({
  t,
}) => {
  const { email } = await t.register()
  // The host's config, shared with createGateway, which takes these nulls as its defaults.
  const config = JSON.parse('{"plans": null, "timeZone": null}') as { plans?: Record<string, Plan>; timeZone?: string }
  const admin = accountAdmin({ storage: internalsOf(t.gateway).storage, ...config })
  assert.is((await admin.get(email))?.expiresOn, dateInZone('UTC', 30))
  assert.is((await admin.renew(email, '1')).expiresOn, dateInZone('UTC', 60))
})

test.run()
