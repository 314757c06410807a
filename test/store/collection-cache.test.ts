import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Storage } from '../../src/ports/storage.ts'
import { silentLogger } from '../../src/logger.ts'
import { cacheEpoch } from '../../src/store/cache-epoch.ts'
import { Collection } from '../../src/store/collection.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'

/**
 * A collection's record cache never serves a value older than a write through this process, nor one
 * older than another process's change once the cache epoch moved (README: "writes through this
 * gateway invalidate at once"; docs/scaling.md: every process drops its cached records when the
 * epoch moves). The ttl here is a minute, so only the invalidation can make a change show.
 */
const test = suite('Collection cache: writes and the epoch')
const cached = (storage: Storage, epoch?: ReturnType<typeof cacheEpoch>) =>
  new Collection<{ n: number }>(storage, new KeyedLock(), 'rec', { cache: { ttlMs: 60_000, maxEntries: 10, ...(epoch ? { epoch } : {}) } })
const tick = () => new Promise(resolve => setImmediate(resolve))

test('a read during a slow write gets the old value, and the next read the new one (the old one is not left cached)', async () => {
  const base = memoryStorage()
  let release!: () => void
  const storage: Storage = { ...base, set: async (key, value, ttlMs) => (await new Promise<void>(resolve => (release = resolve)), base.set(key, value, ttlMs)) }
  await base.set('rec:1', { n: 1 })
  const records = cached(storage)
  const writing = records.put('1', { n: 2 })
  await tick()
  assert.equal(await records.get('1'), { n: 1 }, 'read while the write is under way')
  release()
  await writing
  assert.equal(await records.get('1'), { n: 2 })
})

test('a read under way when a write begins does not fill the cache with the value it read', async () => {
  const { records, reading, release } = await readHeldAtStore()
  await records.put('1', { n: 2 })
  release()
  assert.equal(await reading, { n: 1 })
  assert.equal(await records.get('1'), { n: 2 })
})

test('a read under way when forget() drops the cache (another process changed the record) does not put the value it read back in the cache', async () => {
  const { base, records, reading, release } = await readHeldAtStore()
  await base.set('rec:1', { n: 2 }) // another process's write, straight to the store
  records.forget() // the epoch moved: this process drops what it cached
  release()
  assert.equal(await reading, { n: 1 }, 'the read began before the change')
  assert.equal(await records.get('1'), { n: 2 }, 'the next read sees the change, not the old value cached by the read under way')
  assert.equal(records.peek('1'), { n: 2 })
})

test("another process's bump of the epoch drops this process's cached records within a poll or two", async () => {
  const storage = memoryStorage()
  const [other, mine] = [cacheEpoch(storage, 20, silentLogger), cacheEpoch(storage, 20, silentLogger)]
  await other.start()
  await mine.start()
  try {
    const records = cached(storage, mine)
    await storage.set('rec:1', { n: 1 })
    assert.equal(await records.get('1'), { n: 1 })
    await storage.set('rec:1', { n: 2 }) // the other process's write
    await other.bump()
    await new Promise(resolve => setTimeout(resolve, 100))
    assert.equal(await records.get('1'), { n: 2 })
  } finally {
    other.stop()
    mine.stop()
  }
})

/** Records over a store whose first read is held once it has read (`release` lets it go), with that read of rec 1 ({ n: 1 }) under way. */
async function readHeldAtStore() {
  const base = memoryStorage()
  let release: (() => void) | undefined
  const storage: Storage = {
    ...base,
    get: async <T>(key: string) => {
      const value = await base.get<T>(key)
      if (!release) await new Promise<void>(resolve => (release = resolve))
      return value
    },
  }
  await base.set('rec:1', { n: 1 })
  const records = cached(storage)
  const reading = records.get('1')
  await tick()
  return { base, records, reading, release: () => release!() }
}

test.run()
