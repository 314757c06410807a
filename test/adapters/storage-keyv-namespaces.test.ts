import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { needing, POSTGRES, REDIS } from '../helpers/requires.ts'

/**
 * Several gateways share one Redis or SQL database by their namespaces. A namespace with `:` (the
 * stores' separator) could share keys with another: `a` and `a:devices` on PostgreSQL (the key `x`
 * of the second was `devices:x` of the first, listed, read and overwritten by it). Such a namespace
 * is refused at open, on every store.
 */
const test = suite('storage-keyv: namespaces never share keys')

test('a namespace holding ":", or empty, is refused at open with what to change', async () => {
  for (const namespace of ['a:devices', 'zapgate:', ':x', '']) {
    await assert.rejects(storageFromUrl('memory://', { namespace }), /give a non-empty one without ":"/, JSON.stringify(namespace))
  }
})

for (const backend of [REDIS, POSTGRES]) {
  needing(
    test,
    backend,
    `the namespace test on ${backend.name}`,
  )(`${backend.name}: a gateway's namespace and another's with ":" cannot both open`, async () => {
    const namespace = `ns-${process.pid}-${Date.now()}`
    const storage = await storageFromUrl(backend.value!, { namespace })
    try {
      await storage.set('device:x', 'mine')
      await assert.rejects(storageFromUrl(backend.value!, { namespace: `${namespace}:device` }), /without ":"/)
      assert.deepEqual(await storage.get('device:x'), 'mine')
    } finally {
      await storage.delete('device:x')
      await storage.close!()
    }
  })
}

test.run()
