import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Storage } from '../../src/ports/storage.ts'
import { Collection } from '../../src/store/collection.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { needing } from '../helpers/requires.ts'
import { sharedBackends, withoutAtomicSteps } from '../helpers/shared-backends.ts'

type Counter = { count: number; by: number[] }

const collection = suite('Collection over an atomic store')

collection('create(id, value) writes only when there is no record, and says whether it did', async () => {
  const records = new Collection<{ n: number }>(memoryStorage(), new KeyedLock(), 'thing')
  assert.is(records.shared, true)
  assert.is(await records.create('1', { n: 1 }), true)
  assert.is(await records.create('1', { n: 2 }), false)
  assert.equal(await records.get('1'), { n: 1 })
})

collection('create(id, value, ttlMs) makes a record that expires, after which the id can be created again', async () => {
  const records = new Collection<string>(memoryStorage(), new KeyedLock(), 'claim')
  assert.is(await records.create('job', 'first', 50), true)
  await new Promise(resolve => setTimeout(resolve, 100))
  assert.is(await records.create('job', 'second'), true)
  assert.is(await records.get('job'), 'second')
})

collection('replace(id, expected, next) writes only while the record still equals expected', async () => {
  const records = new Collection<{ state: string; tries?: number }>(memoryStorage(), new KeyedLock(), 'otp')
  await records.put('1', { state: 'issued', tries: 0 })
  assert.is(await records.replace('1', { tries: 0, state: 'issued' }, { state: 'issued', tries: 1 }), true)
  assert.is(await records.replace('1', { state: 'issued', tries: 0 }, { state: 'issued', tries: 1 }), false)
  assert.equal(await records.get('1'), { state: 'issued', tries: 1 })
  assert.is(await records.replace('2', undefined, { state: 'new' }), true)
  assert.is(await records.replace('2', undefined, { state: 'newer' }), false)
})

collection('removeIfEqual(id, expected) removes only a record equal to expected', async () => {
  const records = new Collection<{ owner: string }>(memoryStorage(), new KeyedLock(), 'lease')
  await records.put('1', { owner: 'a' })
  assert.is(await records.removeIfEqual('1', { owner: 'b' }), false)
  assert.equal(await records.get('1'), { owner: 'a' })
  assert.is(await records.removeIfEqual('1', { owner: 'a' }), true)
  assert.is(await records.get('1'), undefined)
  assert.is(await records.removeIfEqual('1', { owner: 'a' }), false)
})

collection('update(id, change) runs change again on the newer record when another process wrote in between', async () => {
  const storage = memoryStorage()
  const here = new Collection<Counter>(storage, new KeyedLock(), 'counter')
  const elsewhere = new Collection<Counter>(storage.connectAgain(), new KeyedLock(), 'counter')
  await here.put('1', { count: 0, by: [] })
  const seen: Counter[] = []
  const result = await here.update('1', async current => {
    seen.push(structuredClone(current!))
    // The first time, another process changes the record between this read and the write.
    if (seen.length === 1) await elsewhere.update('1', c => ({ count: c!.count + 1, by: [...c!.by, 99] }))
    return { count: current!.count + 1, by: [...current!.by, 1] }
  })
  assert.equal(seen, [
    { count: 0, by: [] },
    { count: 1, by: [99] },
  ])
  assert.equal(result, { count: 2, by: [99, 1] })
  assert.equal(await here.get('1'), { count: 2, by: [99, 1] })
})

collection('update(id, change) gives change a copy: changing it in place and returning it writes the change', async () => {
  const records = new Collection<{ name: string }>(memoryStorage(), new KeyedLock(), 'device')
  await records.put('1', { name: 'old' })
  const result = await records.update('1', current => {
    current!.name = 'new'
    return current
  })
  assert.equal(result, { name: 'new' })
  assert.equal(await records.get('1'), { name: 'new' })
})

collection('update(id, change) writes nothing when change returns undefined, and resolves the current record', async () => {
  const storage = memoryStorage()
  const records = new Collection<{ n: number }>(storage, new KeyedLock(), 'thing')
  await records.put('1', { n: 1 }, 60_000)
  assert.equal(await records.update('1', () => undefined), { n: 1 })
  assert.is(await records.update('missing', () => undefined), undefined)
  assert.is(await storage.get('thing:missing'), undefined)
})

collection("one process's concurrent updates of a record queue on its lock instead of colliding (change runs once each)", async () => {
  const records = new Collection<Counter>(memoryStorage(), new KeyedLock(), 'counter')
  let calls = 0
  await Promise.all(Array.from({ length: 50 }, (_, i) => records.update('1', c => (calls++, { count: (c?.count ?? 0) + 1, by: [...(c?.by ?? []), i] }))))
  assert.is((await records.get('1'))!.count, 50)
  assert.is(calls, 50)
})

collection('create, replace, removeIfEqual and update refresh the record cache at once', async () => {
  const reads: string[] = []
  const records = new Collection<{ v: number }>(readRecording(reads), new KeyedLock(), 'cached', { cache: { ttlMs: 60_000, maxEntries: 10 } })
  const read = async (expected: { v: number } | undefined, cached: boolean) => {
    reads.length = 0
    assert.equal(await records.get('1'), expected)
    assert.is(reads.length === 0, cached, cached ? 'answered from the cache' : 'read from the store')
  }
  assert.is(await records.create('1', { v: 1 }), true)
  await read({ v: 1 }, false)
  await read({ v: 1 }, true)
  await records.replace('1', { v: 1 }, { v: 2 })
  await read({ v: 2 }, false)
  await records.update('1', c => ({ v: c!.v + 1 }))
  await read({ v: 3 }, false)
  await records.removeIfEqual('1', { v: 3 })
  await read(undefined, false)
})

/** A memory storage recording the key of every read. */
function readRecording(reads: string[]): Storage {
  const inner = memoryStorage()
  return { ...inner, get: <T>(key: string) => (reads.push(key), inner.get<T>(key)) }
}

collection.run()

const single = suite('Collection over a store without atomic steps (one process)')

single('create, replace, removeIfEqual and update keep working under the in-process lock', async () => {
  const storage = withoutAtomicSteps(memoryStorage())
  const records = new Collection<Counter>(storage, new KeyedLock(), 'counter')
  assert.is(records.shared, false)
  const created = await Promise.all(Array.from({ length: 30 }, (_, i) => records.create('new', { count: 0, by: [i] })))
  assert.is(created.filter(Boolean).length, 1)
  let calls = 0
  await Promise.all(Array.from({ length: 50 }, (_, i) => records.update('1', c => (calls++, { count: (c?.count ?? 0) + 1, by: [...(c?.by ?? []), i] }))))
  assert.is((await records.get('1'))!.count, 50)
  assert.is(calls, 50)
  const current = await records.get('1')
  assert.is(await records.replace('1', { ...current!, count: 0 }, { count: -1, by: [] }), false)
  assert.is(await records.replace('1', current, { count: -1, by: [] }), true)
  assert.is(await records.removeIfEqual('1', { count: -2, by: [] }), false)
  assert.is(await records.removeIfEqual('1', { count: -1, by: [] }), true)
})

single.run()

for (const backend of sharedBackends()) {
  const races = suite(`Collection on ${backend.name}, two processes' storages`)
  const shared = needing(races, backend.service, `Collection races between two processes on ${backend.name}`)

  shared(`50 concurrent updates of one record from two processes' storages, each adding 1, lose none`, async () => {
    const { a, b, close } = await backend.open()
    try {
      // Two processes: each its own storage connection and its own in-process lock.
      const here = new Collection<Counter>(a, new KeyedLock(), 'counter')
      const there = new Collection<Counter>(b, new KeyedLock(), 'counter')
      let calls = 0
      await Promise.all(
        Array.from({ length: 50 }, (_, i) => (i % 2 ? there : here).update('1', c => (calls++, { count: (c?.count ?? 0) + 1, by: [...(c?.by ?? []), i] }))),
      )
      const record = await here.get('1')
      assert.is(record!.count, 50)
      assert.equal(
        [...record!.by].sort((x, y) => x - y),
        Array.from({ length: 50 }, (_, i) => i),
      )
      assert.ok(calls > 50, `the two processes collided and retried (${calls} changes for 50 updates)`)
    } finally {
      await close()
    }
  })

  shared(`30 concurrent creates of one id from two processes' storages: exactly one gets true`, async () => {
    const { a, b, close } = await backend.open()
    try {
      const here = new Collection<{ by: number }>(a, new KeyedLock(), 'account')
      const there = new Collection<{ by: number }>(b, new KeyedLock(), 'account')
      const results = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? there : here).create('one', { by: i })))
      const winners = results.flatMap((won, i) => (won ? [i] : []))
      assert.is(winners.length, 1)
      assert.equal(await there.get('one'), { by: winners[0] })
    } finally {
      await close()
    }
  })

  races.run()
}
