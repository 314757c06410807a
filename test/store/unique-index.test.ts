import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { KeyedLock } from '../../src/store/keyed-lock.ts'
import { UniqueIndex } from '../../src/store/unique-index.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { needing } from '../helpers/requires.ts'
import { sharedBackends, withoutAtomicSteps } from '../helpers/shared-backends.ts'

type Owner = { accountId: string }

const index = suite('UniqueIndex')

index('claim(value, owner) gives a value to its first owner only', async () => {
  const emails = new UniqueIndex<Owner>(memoryStorage(), new KeyedLock(), 'account-email')
  assert.is(await emails.claim('ana@example.com', { accountId: 'a' }), true)
  assert.is(await emails.claim('ana@example.com', { accountId: 'b' }), false)
  assert.equal(await emails.get('ana@example.com'), { accountId: 'a' })
})

index('claim(value, owner) again by an equal owner succeeds (a retried claim)', async () => {
  const emails = new UniqueIndex<Owner>(memoryStorage(), new KeyedLock(), 'account-email')
  assert.is(await emails.claim('ana@example.com', { accountId: 'a' }), true)
  assert.is(await emails.claim('ana@example.com', { accountId: 'a' }), true)
})

index('release(value, owner) frees the value only for its holder, and then another owner may claim it', async () => {
  const names = new UniqueIndex<{ deviceId: string }>(memoryStorage(), new KeyedLock(), 'device-name')
  await names.claim('acc1:phone', { deviceId: 'd1' })
  assert.is(await names.removeIfEqual('acc1:phone', { deviceId: 'd2' }), false)
  assert.equal(await names.get('acc1:phone'), { deviceId: 'd1' })
  assert.is(await names.removeIfEqual('acc1:phone', { deviceId: 'd1' }), true)
  assert.is(await names.claim('acc1:phone', { deviceId: 'd2' }), true)
})

index('transfer(value, from, to) hands a value over only from its holder', async () => {
  const keys = new UniqueIndex<{ deviceId: string; retired?: boolean }>(memoryStorage(), new KeyedLock(), 'device-appkey')
  await keys.claim('k', { deviceId: 'd1' })
  assert.is(await keys.replace('k', { deviceId: 'd2' }, { deviceId: 'd2', retired: true }), false)
  assert.is(await keys.replace('k', { deviceId: 'd1' }, { deviceId: 'd1', retired: true }), true)
  assert.equal(await keys.get('k'), { deviceId: 'd1', retired: true })
})

index('a claim with ttlMs expires, and the value can then be claimed by another owner', async () => {
  const holds = new UniqueIndex<Owner>(memoryStorage(), new KeyedLock(), 'hold')
  assert.is(await holds.claim('x', { accountId: 'a' }, 50), true)
  await new Promise(resolve => setTimeout(resolve, 100))
  assert.is(await holds.claim('x', { accountId: 'b' }), true)
})

index('entries live under <name>:<value>, where the Collection-based indexes kept them', async () => {
  const storage = memoryStorage()
  await storage.set('account-email:hash1', { accountId: 'old' })
  const emails = new UniqueIndex<Owner>(storage, new KeyedLock(), 'account-email')
  assert.is(emails.key('hash1'), 'account-email:hash1')
  assert.is(await emails.claim('hash1', { accountId: 'new' }), false)
  assert.equal(await emails.get('hash1'), { accountId: 'old' })
})

index('without atomic steps, concurrent claims in one process still give the value to one owner', async () => {
  const emails = new UniqueIndex<Owner>(withoutAtomicSteps(memoryStorage()), new KeyedLock(), 'account-email')
  const results = await Promise.all(Array.from({ length: 30 }, (_, i) => emails.claim('ana@example.com', { accountId: String(i) })))
  assert.is(results.filter(Boolean).length, 1)
})

index.run()

for (const backend of sharedBackends()) {
  const races = suite(`UniqueIndex on ${backend.name}, two processes' storages`)
  const shared = needing(races, backend.service, `UniqueIndex races between two processes on ${backend.name}`)

  shared(`30 concurrent claims of one e-mail by different owners from two processes' storages: exactly one holds it`, async () => {
    const { a, b, close } = await backend.open()
    try {
      const here = new UniqueIndex<Owner>(a, new KeyedLock(), 'account-email')
      const there = new UniqueIndex<Owner>(b, new KeyedLock(), 'account-email')
      const results = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? there : here).claim('ana@example.com', { accountId: String(i) })))
      const winners = results.flatMap((won, i) => (won ? [i] : []))
      assert.is(winners.length, 1)
      assert.equal(await there.get('ana@example.com'), { accountId: String(winners[0]) })
    } finally {
      await close()
    }
  })

  shared(`release and re-claim raced from two processes' storages: the value never has two holders`, async () => {
    const { a, b, close } = await backend.open()
    try {
      const here = new UniqueIndex<Owner>(a, new KeyedLock(), 'device-name')
      const there = new UniqueIndex<Owner>(b, new KeyedLock(), 'device-name')
      await here.claim('acc:phone', { accountId: 'first' })
      // The holder releases while 20 others try to take it: exactly one of them gets it.
      const [released, ...claims] = await Promise.all([
        here.removeIfEqual('acc:phone', { accountId: 'first' }),
        ...Array.from({ length: 20 }, (_, i) => (i % 2 ? there : here).claim('acc:phone', { accountId: `next-${i}` })),
      ])
      assert.is(released, true)
      assert.ok(claims.filter(Boolean).length <= 1, `claims won: ${claims.filter(Boolean).length}`)
      const owner = await there.get('acc:phone')
      if (claims.some(Boolean)) assert.equal(owner, { accountId: `next-${claims.indexOf(true)}` })
      else assert.is(owner, undefined)
    } finally {
      await close()
    }
  })

  races.run()
}
