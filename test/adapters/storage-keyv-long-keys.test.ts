import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { needing, POSTGRES } from '../helpers/requires.ts'

/**
 * PostgreSQL keeps keys in a VARCHAR(255): a longer key (a message id a sender chose, in an agent's
 * `flow-taken` mark or a Baileys `msg:` key) was refused, and the work that wrote it failed. The
 * storage now stores such a key under its start and a hash of the whole: every step of the port
 * works with it, a listing of its prefix finds it, and two long keys that start alike stay apart.
 */
const longKeys = suite('storage-keyv on PostgreSQL: keys longer than the column')
const pg = needing(longKeys, POSTGRES, 'the long-key suite of storage-keyv on PostgreSQL')

pg(
  'a 600-character key: set, get, add, compareAndSet, increment, list, deleteIfEqual and delete all work, and a look-alike key is another record',
  async () => {
    const storage = await storageFromUrl(POSTGRES.value!, { namespace: `long-${process.pid}-${Date.now()}` })
    const prefix = 'flow-taken:3b0c1a7e-0000-4000-8000-000000000000:5511988880002:'
    const key = prefix + 'A'.repeat(600)
    const twin = prefix + 'A'.repeat(599) + 'B' // the same first 255 characters and more
    try {
      await storage.set(key, { n: 1 })
      assert.deepEqual(await storage.get(key), { n: 1 })
      assert.equal(await storage.get(twin), undefined, 'a key starting alike is not the same record')
      assert.equal(await storage.add!(twin, 'twin', 60_000), true)
      assert.equal(await storage.add!(twin, 'again', 60_000), false, 'add sees the record it made')
      assert.equal(await storage.compareAndSet!(key, { n: 1 }, { n: 2 }), true)
      assert.deepEqual(await storage.get(key), { n: 2 })
      assert.equal(await storage.increment!(`${prefix}count-${'C'.repeat(400)}`, 3), 3)
      const listed = []
      for await (const [name, value] of storage.list(prefix)) listed.push([name.startsWith(prefix), value])
      assert.equal(listed.length, 3, 'the listing of the prefix finds the three')
      assert.ok(listed.every(([starts]) => starts))
      assert.equal(await storage.deleteIfEqual!(twin, 'twin'), true)
      await storage.delete(key)
      assert.equal(await storage.get(key), undefined)
    } finally {
      for await (const [name] of storage.list('')) await storage.delete(name)
      await storage.close!()
    }
  },
)

longKeys.run()
