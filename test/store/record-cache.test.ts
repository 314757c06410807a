import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { RecordCache } from '../../src/store/record-cache.ts'

const test = suite('RecordCache: recently read records, bounded and frozen')

test('a value is served until its ttl, then forgotten', async () => {
  const cache = new RecordCache<{ n: number }>(50, 10)
  cache.set('a', { n: 1 })
  assert.equal(cache.get('a'), { n: 1 })
  await new Promise(resolve => setTimeout(resolve, 70))
  assert.is(cache.get('a'), undefined)
})

test('past maxEntries the oldest entries go first; setting an id again makes it the newest', () => {
  const cache = new RecordCache<number>(60_000, 3)
  for (const id of ['a', 'b', 'c']) cache.set(id, 1)
  cache.set('a', 2) // a is now the newest
  cache.set('d', 1) // b, the oldest, goes
  assert.is(cache.get('b'), undefined)
  assert.equal(['a', 'c', 'd'].map(id => cache.get(id)), [2, 1, 1])
  for (let i = 0; i < 10_000; i++) cache.set(`x${i}`, i)
  assert.equal([cache.get('x9997'), cache.get('x9998'), cache.get('x9999'), cache.get('x9996')], [9997, 9998, 9999, undefined])
})

test('cached values are deep-frozen, and delete(id) forgets one', () => {
  const cache = new RecordCache<{ tags: string[] }>(60_000, 10)
  const value = cache.set('a', { tags: ['x'] })
  assert.throws(() => value.tags.push('y'))
  cache.delete('a')
  assert.is(cache.get('a'), undefined)
})

test.run()
