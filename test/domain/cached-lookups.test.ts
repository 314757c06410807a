import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startGateway, type TestGateway } from '../helpers/gateway.ts'
import type { Account } from '../../src/domain/accounts.ts'
import { internalsOf } from '../../src/internals.ts'
import type { Storage } from '../../src/ports/storage.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'

// authenticate() and find() read the record cache first (the send path's fast path) and the store for
// what it does not hold: answered from the cache, they must answer what the store would, never a
// stale account or device.

type Ctx = {
  t: TestGateway
  storage: Storage
  reads: string[]
  a: string
  b: string
  accountA: Account
  accountB: Account
  device: { id: string; appkey: string }
}
const cached = suite<Ctx>('lookups answered from the cache')

const KEY_MATCH = ['appkey', 'name'] as ('appkey' | 'name' | 'id')[]

cached.before(async ctx => {
  ctx.reads = []
  ctx.storage = readRecording(ctx.reads)
  ctx.t = await startGateway({ storage: ctx.storage })
  ctx.a = (await ctx.t.register()).authkey
  ctx.b = (await ctx.t.register()).authkey
  ctx.device = await ctx.t.linkedDevice(ctx.a, 'loja-a', '5511911112222')
  const { accounts } = internalsOf(ctx.t.gateway)
  ctx.accountA = (await accounts.authenticate(ctx.a))!
  ctx.accountB = (await accounts.authenticate(ctx.b))!
})
cached.after(ctx => ctx.t.stop())

cached('authenticate answers from the cache the account it answered from the store', async ({ t, a, reads }) => {
  const { accounts } = internalsOf(t.gateway)
  const fromStore = await accounts.authenticate(a)
  assert.ok(fromStore)
  reads.length = 0
  assert.equal(await accounts.authenticate(a), fromStore)
  assert.not.ok(reads.includes(`account:${fromStore.id}`), 'the account record is cached')
})

cached('authenticate refuses unknown, malformed and expired keys, expired ones even with their records cached', async ({ t, storage, reads }) => {
  const { accounts } = internalsOf(t.gateway)
  for (const key of ['x'.repeat(32), '', 'y'.repeat(300), 42, undefined]) assert.is(await accounts.authenticate(key), undefined)
  const { authkey: expired, email } = await t.register()
  const account = (await accounts.authenticate(expired))!
  assert.ok(await accounts.authenticate(expired))
  // The account runs out: its record says so in the store (written as another tool would), and a
  // change through the accounts (resuming it) drops every cached copy.
  await storage.set(`account:${account.id}`, { ...account, expiresOn: '2000-01-01' })
  await accounts.suspend(email, false)
  reads.length = 0
  assert.is(await accounts.authenticate(expired), undefined, 'the store path refuses the expired account')
  assert.ok(reads.includes(`account:${account.id}`), 'read from the store')
  reads.length = 0
  assert.is(await accounts.authenticate(expired), undefined, 'and so does the cache path, even with its records cached')
  assert.not.ok(reads.includes(`account:${account.id}`), 'its record was cached again')
})

cached('find answers from the cache the device it answered from the store, scoped to the account', async ({ t, accountA, accountB, device }) => {
  const { devices } = internalsOf(t.gateway)
  const found = await devices.find(accountA, device.appkey, KEY_MATCH)
  assert.is(found?.id, device.id)
  assert.equal(await devices.find(accountA, device.appkey, KEY_MATCH), found)
  assert.is(await devices.find(accountB, device.appkey, KEY_MATCH), undefined, "B gets nothing for A's appkey")
  assert.is(await devices.find(accountB, device.id, ['id']), undefined, "B gets nothing for A's device id")
  assert.is((await devices.find(accountA, device.id, ['id']))?.id, device.id)
})

cached('find answers by name, and nothing for an appkey the account does not have', async ({ t, accountA, device }) => {
  const { devices } = internalsOf(t.gateway)
  await devices.find(accountA, device.appkey, KEY_MATCH)
  assert.is((await devices.find(accountA, 'loja-a', ['name']))?.id, device.id, 'names are looked up through find()')
  assert.is(await devices.find(accountA, 'outra-loja', KEY_MATCH), undefined, 'an appkey not in the cache nor the store')
})

cached('a device removed or an appkey retired is never answered from the cache', async ({ t, a, accountA }) => {
  const { devices } = internalsOf(t.gateway)
  const kept = await t.addDevice(a, 'loja-b')
  const removed = await t.addDevice(a, 'loja-c')
  for (const { appkey } of [kept, removed]) assert.ok(await devices.find(accountA, appkey, KEY_MATCH))
  assert.ok(await devices.find(accountA, removed.appkey, KEY_MATCH), 'answered again, from the cache')
  // Deleted keeping its appkey (retired), and deleted with its appkey.
  assert.is((await t.post('/api/developer', { authkey: a, message: 'loja-c', apagarDispositivo: 'true' })).status, 200)
  assert.is(await devices.find(accountA, removed.appkey, KEY_MATCH), undefined)
  assert.is(await devices.find(accountA, removed.appkey, KEY_MATCH), undefined, 'nor after that read')
  assert.is((await t.post('/api/developer', { authkey: a, message: 'loja-b', apagarDispositivo: 'true', apagarAppkey: 'true' })).status, 200)
  assert.is(await devices.find(accountA, kept.appkey, KEY_MATCH), undefined)
  const send = await t.post('/api/create-message', { authkey: a, appkey: kept.appkey, to: '5511988887777', message: 'oi' })
  assert.is(send.status, 404)
})

cached('sends answer the same with the cache cold and warm: 401 for a bad authkey, 404 for another account, 200 for the owner', async () => {
  const reads: string[] = []
  const t = await startGateway({ cacheTtlMs: 300, storage: readRecording(reads) })
  try {
    const a = (await t.register()).authkey
    const b = (await t.register()).authkey
    const device = await t.linkedDevice(a, 'loja-a', '5511911112222')
    const { accounts } = internalsOf(t.gateway)
    const accountId = (await accounts.authenticate(a))!.id
    await new Promise(resolve => setTimeout(resolve, 400)) // what linking read is no longer cached
    for (const round of ['cold', 'warm']) {
      reads.length = 0
      const body = { appkey: device.appkey, to: '5511988887777', message: `oi ${round}` }
      assert.is((await t.post('/api/create-message', { ...body, authkey: 'z'.repeat(32) })).status, 401)
      assert.is((await t.post('/api/create-message', { ...body, authkey: b })).status, 404)
      const sent = await t.post('/api/create-message', { ...body, authkey: a })
      assert.is(sent.status, 200)
      assert.is((t.network.inbox('5511988887777').at(-1) as { text?: string } | undefined)?.text, `oi ${round}`)
      assert.is(reads.includes(`account:${accountId}`), round === 'cold', `${round}: the account was ${round === 'cold' ? 'not ' : ''}cached`)
    }
  } finally {
    await t.stop()
  }
})

cached('find refuses a retired appkey entry even beside a device record still cached', async ({ t, a, accountA, storage }) => {
  const { devices } = internalsOf(t.gateway)
  const gone = await t.addDevice(a, 'loja-d')
  const record = await devices.find(accountA, gone.appkey, KEY_MATCH)
  assert.ok(record)
  assert.is((await t.post('/api/developer', { authkey: a, message: 'loja-d', apagarDispositivo: 'true' })).status, 200)
  assert.is(await devices.find(accountA, gone.appkey, KEY_MATCH), undefined, 'find() reads (and caches) the retired entry')
  // A device record left behind (as a write racing the removal could leave it), read into the cache:
  // the retired appkey entry alone must keep the device from being answered.
  await storage.set(`device:${gone.id}`, structuredClone(record))
  assert.is((await devices.get(gone.id))?.id, gone.id, 'the record is back, and cached')
  assert.is(await devices.find(accountA, gone.appkey, KEY_MATCH), undefined)
})

/** A memory storage recording the key of every read: a lookup the cache answered reads nothing. */
function readRecording(reads: string[]): Storage {
  const inner = memoryStorage()
  return { ...inner, reach: 'process', get: <T>(key: string) => (reads.push(key), inner.get<T>(key)) }
}

cached.run()
