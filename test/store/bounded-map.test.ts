import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { putBounded } from '../../src/store/bounded-map.ts'
import { seededRandom } from '../helpers/random.ts'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

const test = suite('bounded maps keep the newest entries (simulator state, record caches)')

test('putBounded evicts the oldest entries in order, a re-set key counts as new, outside deletes and clears are fine', () => {
  const random = seededRandom(11)
  for (const limit of [1, 3, 50]) {
    const map = new Map<string, number>()
    let model: string[] = [] // oldest first
    const evicted: string[] = []
    const expectedEvicted: string[] = []
    for (let step = 0; step < 20_000; step++) {
      const roll = random()
      const key = `k${Math.floor(random() * limit * 4)}`
      if (roll < 0.8) {
        putBounded(map, key, step, limit, old => evicted.push(old))
        model = model.filter(k => k !== key)
        model.push(key)
        while (model.length > limit) expectedEvicted.push(model.shift()!)
      } else if (roll < 0.98) {
        map.delete(key)
        model = model.filter(k => k !== key)
      } else {
        map.clear()
        model = []
      }
      assert.equal([...map.keys()], model, `limit ${limit}, step ${step}`)
    }
    assert.equal(evicted, expectedEvicted, `limit ${limit}: evictions in order`)
    assert.ok(evicted.length > 1000, 'the test evicted enough to mean something')
  }
})

test('a map that evicted once and then churns at its limit (a cache re-reading its expired records) keeps its memory bounded', () => {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  const limit = 10_000
  const map = new Map<string, { n: number }>()
  for (let i = 0; i <= limit; i++) putBounded(map, `k${i}`, { n: i }, limit) // one eviction: the cursor is made
  const heap = () => (gc(), process.memoryUsage().heapUsed)
  const before = heap()
  // Each put re-sets a key the map holds (delete and append): the size stays at the limit, nothing is evicted.
  for (let i = 0; i < 600_000; i++) putBounded(map, `k${1 + (i % limit)}`, { n: i }, limit)
  const grown = heap() - before
  assert.equal(map.size, limit)
  assert.ok(grown < 8_000_000, `the heap grew by ${(grown / 1e6).toFixed(1)} MB`)
})

test.run()
