import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { BoundedMap } from '../../src/store/bounded-map.ts'
import { Collection } from '../../src/store/collection.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'

const test = suite('BoundedMap: the one cache, bounded and timed')

test('a value is served until its ttl, then forgotten', async () => {
  const cache = new BoundedMap<string, { n: number }>(10, 50)
  cache.set('a', { n: 1 })
  assert.equal(cache.get('a'), { n: 1 })
  await new Promise(resolve => setTimeout(resolve, 70))
  assert.is(cache.get('a'), undefined)
})

test('past maxEntries the oldest entries go first; setting an id again makes it the newest', () => {
  const cache = new BoundedMap<string, number>(3, 60_000)
  for (const id of ['a', 'b', 'c']) cache.set(id, 1)
  cache.set('a', 2) // a is now the newest
  cache.set('d', 1) // b, the oldest, goes
  assert.is(cache.get('b'), undefined)
  assert.equal(
    ['a', 'c', 'd'].map(id => cache.get(id)),
    [2, 1, 1],
  )
  for (let i = 0; i < 10_000; i++) cache.set(`x${i}`, i)
  assert.equal([cache.get('x9997'), cache.get('x9998'), cache.get('x9999'), cache.get('x9996')], [9997, 9998, 9999, undefined])
})

test('delete(key) forgets one entry and clear() every entry', () => {
  const cache = new BoundedMap<string, number>(10, 60_000)
  for (const key of ['a', 'b', 'c']) cache.set(key, 1)
  cache.delete('a')
  assert.equal([cache.get('a'), cache.has('b'), cache.size], [undefined, true, 2])
  cache.clear()
  assert.equal([cache.get('b'), cache.size], [undefined, 0])
})

test('records a collection keeps in its cache are deep-frozen: a caller cannot change what the next request reads', async () => {
  const inner = memoryStorage()
  let reads = 0
  const storage = { ...inner, get: <T>(key: string) => (reads++, inner.get<T>(key)) }
  const records = new Collection<{ tags: string[] }>(storage, new KeyedLock(), 'thing', { cache: { ttlMs: 60_000, maxEntries: 10 } })
  await records.put('a', { tags: ['x'] })
  const read = (await records.get('a'))!
  assert.throws(() => read.tags.push('y'))
  const readsBefore = reads
  assert.equal(await records.get('a'), { tags: ['x'] })
  assert.is(reads, readsBefore, 'the cached record, unchanged')
})

test.run()
