import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { createClient } from '@keyv/redis'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { needing, REDIS } from '../helpers/requires.ts'

/**
 * storageFromUrl on a Redis that evicts keys when full (a `maxmemory` and a `maxmemory-policy` other
 * than `noeviction`, the default of many managed services): `onWarning` is told, since rate counters,
 * instance heartbeats, OTP codes (and with `allkeys-*` accounts and devices) would be dropped.
 * The shared Redis's settings are changed for the test and put back as they were.
 */
const evictionSuite = suite('storageFromUrl: a Redis that evicts keys')
const eviction = needing(evictionSuite, REDIS, 'the Redis eviction-policy warning of storage-keyv')

eviction('warns of a volatile-* or allkeys-* policy with a maxmemory, not of noeviction or of no maxmemory', async () => {
  const admin = createClient({ url: REDIS.value! })
  await admin.connect()
  const before = await admin.configGet(['maxmemory', 'maxmemory-policy'])
  const set = async (maxmemory: string, policy: string) => {
    await admin.configSet('maxmemory', maxmemory)
    await admin.configSet('maxmemory-policy', policy)
  }
  const warningsOpening = async () => {
    const warnings: string[] = []
    const storage = await storageFromUrl(REDIS.value!, { namespace: `eviction-${process.pid}`, onWarning: message => void warnings.push(message) })
    await storage.close!()
    return warnings
  }
  try {
    await set('1gb', 'volatile-lru')
    const [volatile] = await warningsOpening()
    assert.match(volatile ?? '', /maxmemory-policy volatile-lru/)
    assert.match(volatile!, /rate limits, instance heartbeats, OTP codes can be lost/)
    assert.match(volatile!, /Set maxmemory-policy noeviction/)
    await set('1gb', 'allkeys-lru')
    assert.match((await warningsOpening())[0] ?? '', /OTP codes, accounts and devices can be lost/)
    await set('1gb', 'noeviction')
    assert.deepEqual(await warningsOpening(), [], 'noeviction: nothing to warn of')
    await set('0', 'volatile-lru')
    assert.deepEqual(await warningsOpening(), [], 'no maxmemory: Redis never evicts')
  } finally {
    await set(before['maxmemory'] ?? '0', before['maxmemory-policy'] ?? 'noeviction')
    await admin.quit()
  }
})

evictionSuite(
  'an unreachable Redis with onWarning fails the open, as without it (the eviction check waited on a client that never connects: the start hung for good)',
  async () => {
    const started = Date.now()
    await assert.rejects(storageFromUrl('redis://127.0.0.1:1', { onWarning: () => {} }))
    assert.ok(Date.now() - started < 20_000, `failed after ${Date.now() - started} ms`)
  },
)

evictionSuite.run()
