import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { silentLogger } from '../../src/logger.ts'
import { cacheEpoch } from '../../src/store/cache-epoch.ts'
import { Collection } from '../../src/store/collection.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'

const test = suite('Cache epoch: two processes bump it at once')

test("a bump of another process landing while this one's own bump is on its way still drops this process's cached records", async () => {
  const shared = memoryStorage()
  // Process A: its increment of the epoch is slow (held until released).
  let release!: () => void
  const held = new Promise<void>(resolve => (release = resolve))
  let holding = false
  const storageA = {
    ...shared.connectAgain(),
    increment: async (key: string, by: number, ttlMs?: number) => (holding && (await held), shared.increment(key, by, ttlMs)),
  }
  const storageB = shared.connectAgain()
  const [epochA, epochB] = [cacheEpoch(storageA, 50, silentLogger), cacheEpoch(storageB, 50, silentLogger)]
  await epochA.start()
  await epochB.start()
  const recordsA = new Collection<{ name: string }>(storageA, new KeyedLock(), 'device', { cache: { ttlMs: 60_000, maxEntries: 100, epoch: epochA } })
  const recordsB = new Collection<{ name: string }>(storageB, new KeyedLock(), 'device', { cache: { ttlMs: 60_000, maxEntries: 100, epoch: epochB } })
  await recordsA.put('d1', { name: 'old' })
  // A changes another record and bumps: its caches are dropped, its increment is on its way.
  holding = true
  const bumpA = epochA.bump()
  // Meanwhile A reads d1 (cached), then B changes d1 and bumps (epoch 1).
  assert.is((await recordsA.get('d1'))?.name, 'old')
  await recordsB.put('d1', { name: 'new' })
  await epochB.bump()
  // A's increment lands (epoch 2) and A takes 2 as seen: B's bump is never noticed.
  release()
  await bumpA
  await new Promise(resolve => setTimeout(resolve, 500)) // ten polls of A
  assert.is((await recordsA.get('d1'))?.name, 'new', "A still serves d1 from its cache as it was before B's change (until the cache ttl)")
  epochA.stop()
  epochB.stop()
})

test.run()
