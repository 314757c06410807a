import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startGateway, type TestGateway } from '../helpers/gateway.ts'
import type { Account } from '../../src/domain/accounts.ts'
import { internalsOf } from '../../src/internals.ts'

// cachedAccount() and cachedDevice() answer the send path from the record cache without a promise.
// They may only ever confirm what authenticate() / find() would answer, and never refuse: whatever
// the cache cannot settle must be left to the lookups that read the store.

type Ctx = { t: TestGateway; a: string; b: string; accountA: Account; accountB: Account; device: { id: string; appkey: string } }
const cached = suite<Ctx>('lookups answered from the cache')

const KEY_MATCH = ['appkey', 'name'] as ('appkey' | 'name' | 'id')[]

cached.before(async ctx => {
  ctx.t = await startGateway()
  ctx.a = (await ctx.t.register()).authkey
  ctx.b = (await ctx.t.register()).authkey
  ctx.device = await ctx.t.linkedDevice(ctx.a, 'loja-a', '5511911112222')
  const { accounts } = internalsOf(ctx.t.gateway)
  ctx.accountA = (await accounts.authenticate(ctx.a))!
  ctx.accountB = (await accounts.authenticate(ctx.b))!
})
cached.after(ctx => ctx.t.stop())

cached('cachedAccount answers the account authenticate() answers once both records are cached', async ({ t, a }) => {
  const { accounts } = internalsOf(t.gateway)
  const fromStore = await accounts.authenticate(a)
  assert.ok(fromStore)
  assert.equal(accounts.cachedAccount(a), fromStore)
})

cached('cachedAccount leaves unknown, malformed and expired keys to the store (never answers them)', async ({ t }) => {
  const { accounts } = internalsOf(t.gateway)
  for (const key of ['x'.repeat(32), '', 'y'.repeat(300), 42, undefined]) assert.is(accounts.cachedAccount(key), undefined)
  const expired = (await t.register()).authkey
  const account = (await accounts.authenticate(expired))!
  assert.ok(accounts.cachedAccount(expired))
  // The account runs out: its record says so in the store (a write also drops it from the cache).
  const records = (accounts as unknown as { accounts: { put(id: string, value: Account): Promise<void> } }).accounts
  await records.put(account.id, { ...account, expiresOn: '2000-01-01' })
  assert.is(await accounts.authenticate(expired), undefined, 'the store path refuses the expired account')
  assert.is(accounts.cachedAccount(expired), undefined, 'and so does the cache path, even with its records cached')
})

cached('cachedDevice answers the device find() answers, scoped to the account', async ({ t, accountA, accountB, device }) => {
  const { devices } = internalsOf(t.gateway)
  const found = await devices.find(accountA, device.appkey, KEY_MATCH)
  assert.is(found?.id, device.id)
  assert.equal(devices.cachedDevice(accountA, device.appkey, KEY_MATCH), found)
  assert.is(devices.cachedDevice(accountB, device.appkey, KEY_MATCH), undefined, "B gets nothing for A's appkey")
  assert.is(devices.cachedDevice(accountB, device.id, ['id']), undefined, "B gets nothing for A's device id")
  assert.is(devices.cachedDevice(accountA, device.id, ['id'])?.id, device.id)
})

cached('cachedDevice leaves to find() what the cache cannot settle', async ({ t, accountA, device }) => {
  const { devices } = internalsOf(t.gateway)
  await devices.find(accountA, device.appkey, KEY_MATCH)
  assert.is(devices.cachedDevice(accountA, 'loja-a', ['name']), undefined, 'names are only looked up through find()')
  assert.is(devices.cachedDevice(accountA, 'outra-loja', KEY_MATCH), undefined, 'an appkey not in the cache')
})

cached('a device removed or an appkey retired is never answered from the cache', async ({ t, a, accountA }) => {
  const { devices } = internalsOf(t.gateway)
  const kept = await t.addDevice(a, 'loja-b')
  const removed = await t.addDevice(a, 'loja-c')
  for (const { appkey } of [kept, removed]) assert.ok(await devices.find(accountA, appkey, KEY_MATCH))
  assert.ok(devices.cachedDevice(accountA, removed.appkey, KEY_MATCH))
  // Deleted keeping its appkey (retired), and deleted with its appkey.
  assert.is((await t.post('/api/developer', { authkey: a, message: 'loja-c', apagarDispositivo: 'true' })).status, 200)
  assert.is(devices.cachedDevice(accountA, removed.appkey, KEY_MATCH), undefined)
  assert.is(await devices.find(accountA, removed.appkey, KEY_MATCH), undefined)
  assert.is((await t.post('/api/developer', { authkey: a, message: 'loja-b', apagarDispositivo: 'true', apagarAppkey: 'true' })).status, 200)
  assert.is(devices.cachedDevice(accountA, kept.appkey, KEY_MATCH), undefined)
  const send = await t.post('/api/create-message', { authkey: a, appkey: kept.appkey, to: '5511988887777', message: 'oi' })
  assert.is(send.status, 404)
})

cached('sends answer the same with the cache cold and warm: 401 for a bad authkey, 404 for another account, 200 for the owner', async () => {
  const t = await startGateway({ cacheTtlMs: 300 })
  try {
    const a = (await t.register()).authkey
    const b = (await t.register()).authkey
    const device = await t.linkedDevice(a, 'loja-a', '5511911112222')
    const { accounts } = internalsOf(t.gateway)
    await new Promise(resolve => setTimeout(resolve, 400)) // what linking read is no longer cached
    for (const round of ['cold', 'warm']) {
      assert.is(accounts.cachedAccount(a) === undefined, round === 'cold', `${round}: the account is ${round === 'cold' ? 'not ' : ''}cached`)
      const body = { appkey: device.appkey, to: '5511988887777', message: `oi ${round}` }
      assert.is((await t.post('/api/create-message', { ...body, authkey: 'z'.repeat(32) })).status, 401)
      assert.is((await t.post('/api/create-message', { ...body, authkey: b })).status, 404)
      const sent = await t.post('/api/create-message', { ...body, authkey: a })
      assert.is(sent.status, 200)
      assert.is((t.network.inbox('5511988887777').at(-1) as { text?: string } | undefined)?.text, `oi ${round}`)
    }
  } finally {
    await t.stop()
  }
})

cached('cachedDevice refuses a retired appkey entry even beside a device record still cached', async ({ t, a, accountA }) => {
  const { devices } = internalsOf(t.gateway)
  const gone = await t.addDevice(a, 'loja-d')
  const record = await devices.find(accountA, gone.appkey, KEY_MATCH)
  assert.ok(record)
  assert.is((await t.post('/api/developer', { authkey: a, message: 'loja-d', apagarDispositivo: 'true' })).status, 200)
  assert.is(await devices.find(accountA, gone.appkey, KEY_MATCH), undefined, 'find() reads (and caches) the retired entry')
  // A device record left in the cache (as a read racing the removal could leave it): the retired
  // appkey entry alone must keep the device from being answered.
  const internal = devices as unknown as { devices: { cache: { set(id: string, value: unknown): void } } }
  internal.devices.cache.set(gone.id, structuredClone(record))
  assert.is(devices.cachedDevice(accountA, gone.appkey, KEY_MATCH), undefined)
})

cached.run()
