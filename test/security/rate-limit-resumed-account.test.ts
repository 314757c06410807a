import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { internalsOf } from '../../src/internals.ts'
import { hashKey } from '../../src/security/keys.ts'
import { proxiedGateway, type ProxiedGateway } from '../helpers/rate-limit.ts'

/**
 * A suspended or expired account's own key is refused (401) like an unknown one, but it is a real key:
 * its client retrying while the host settles the bill must not find the key locked out (429 for up to
 * 15 minutes) once the host resumes or renews the account, which accepts the key again at once.
 */
const test = suite("a suspended or expired account's key, resumed or renewed")

const NAT = '203.0.113.7'

/** The e-mail of the account whose key is `authkey` (from the store). */
async function emailOf(g: ProxiedGateway, authkey: string): Promise<string> {
  for await (const [, value] of internalsOf(g.gateway).storage.list<{ email: string; authkeyHash: string }>('account:'))
    if (value.authkeyHash === hashKey(authkey)) return value.email
  throw new Error('no account has that key')
}

/** Run `body` with a gateway behind a trusted proxy and a tenant's key, stopped after. */
async function withTenant(body: (g: ProxiedGateway, authkey: string, email: string) => Promise<void>): Promise<void> {
  const g = await proxiedGateway()
  try {
    const authkey = await g.tenant(NAT)
    await body(g, authkey, await emailOf(g, authkey))
  } finally {
    await g.stop()
  }
}

test('asked 40 times while suspended (each 401), the key works at once after resume', () =>
  withTenant(async (g, authkey, email) => {
    await g.gateway.accounts.suspend(email)
    for (let i = 0; i < 40; i++) assert.equal((await g.status(NAT, authkey)).status, 401, `attempt ${i + 1} while suspended`)
    await g.gateway.accounts.resume(email)
    const answer = await g.status(NAT, authkey)
    assert.equal(answer.status, 200, answer.text)
  }))

test('asked 40 times while expired (each 401), the key works at once after renew', () =>
  withTenant(async (g, authkey, email) => {
    const { storage, epoch } = internalsOf(g.gateway)
    for await (const [key, value] of storage.list<{ email: string }>('account:'))
      if (value.email === email) await storage.set(key, { ...value, expiresOn: '2020-01-01' })
    await epoch.bump()
    for (let i = 0; i < 40; i++) assert.equal((await g.status(NAT, authkey)).status, 401, `attempt ${i + 1} while expired`)
    await g.gateway.accounts.renew(email)
    const answer = await g.status(NAT, authkey)
    assert.equal(answer.status, 200, answer.text)
  }))

test('an unknown key is still locked out from that IP past 30 failures', () =>
  withTenant(async g => {
    for (let i = 0; i < 30; i++) assert.equal((await g.status(NAT, 'nunca-existiu')).status, 401)
    assert.equal((await g.status(NAT, 'nunca-existiu')).status, 429)
  }))

test.run()
