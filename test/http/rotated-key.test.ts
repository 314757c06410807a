import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { hashKey } from '../../src/security/keys.ts'
import { internalsOf } from '../../src/internals.ts'
import { startGateway, type TestGateway } from '../helpers/gateway.ts'

/**
 * rotateKey writes the new key's index entry and the account's new key hash, then removes the old
 * key's `authkey:<hash>` entry. A crash between those writes leaves the old entry behind: the old key
 * must still be refused (the account's own hash decides, not the index entry alone).
 */
const test = suite<{ t: TestGateway }>('a rotated authkey whose old index entry was left behind')

test.before.each(async ctx => {
  ctx.t = await startGateway({ rateLimit: false })
})
test.after.each(async ctx => {
  await ctx.t.stop()
})

const status = (t: TestGateway, authkey: string) => t.post('/api/developer', { authkey, message: 'nada', checkDispositivo: 'true' })
const REFUSED = { status: 401, message: 'validation.required' }

test('after rotateKey, the old key is refused (401) even with its authkey: entry back in the store; the new key works', async ({ t }) => {
  const { authkey: oldKey, email } = await t.register()
  const { storage, epoch } = internalsOf(t.gateway)
  const oldEntryKey = `authkey:${hashKey(oldKey)}`
  const oldEntry = await storage.get<{ accountId: string }>(oldEntryKey)
  assert.ok(oldEntry?.accountId, 'the old key has its index entry')
  assert.is((await status(t, oldKey)).status, 404, 'the old key is accepted before the rotation (404: no such device)')

  const rotated = await t.gateway.accounts.rotateKey(email)
  assert.is(await storage.get(oldEntryKey), undefined, 'rotateKey removed the old entry')
  // As a crash between rotateKey's writes leaves it: the account has the new key hash, the old entry is still there.
  await storage.set(oldEntryKey, oldEntry)
  await epoch.bump() // no cached copy decides: the records are read from the store

  assert.equal((await status(t, oldKey)).body, REFUSED, 'the old key is refused')
  const send = await t.post('/api/create-message', { authkey: oldKey, appkey: 'x', to: '5511988880002', message: 'oi' })
  assert.equal(send.body, REFUSED, 'a send with the old key is refused')
  assert.is((await status(t, oldKey)).status, 401, 'still refused once its records are cached')
  assert.is((await status(t, rotated.authkey)).status, 404, 'the new key is accepted')
})

test.run()
