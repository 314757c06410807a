import { rejects } from 'node:assert/strict'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { KeyedLock, atomicSteps } from '../../src/store/keyed-lock.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'

const lock = suite('KeyedLock')
const tick = () => new Promise(resolve => setImmediate(resolve))

lock('run(key, fn) serialises work on one key so read-modify-write loses no update', async () => {
  const locks = new KeyedLock()
  let value = 0
  await Promise.all(
    Array.from({ length: 100 }, () =>
      locks.run('k', async () => {
        const read = value
        await tick()
        value = read + 1
      }),
    ),
  )
  assert.is(value, 100)
  assert.is(locks.size, 0)
})

lock('run(key, fn) lets different keys proceed concurrently', async () => {
  const locks = new KeyedLock()
  const order: string[] = []
  let release!: () => void
  const gate = new Promise<void>(resolve => (release = resolve))
  const a = locks.run('a', async () => {
    await gate
    order.push('a')
  })
  await locks.run('b', async () => order.push('b'))
  release()
  await a
  assert.equal(order, ['b', 'a'])
})

lock('a failing fn rejects its caller and does not block the next one', async () => {
  const locks = new KeyedLock()
  let failed = false
  await locks
    .run('k', async () => {
      throw new Error('x')
    })
    .catch(() => (failed = true))
  assert.ok(failed)
  assert.is(await locks.run('k', async () => 42), 42)
})

lock('run nested over sorted keys holds every key without deadlock', async () => {
  const locks = new KeyedLock()
  let inside = 0
  let maxInside = 0
  await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      runAll(locks, i % 2 ? ['x', 'y'] : ['y', 'x'], async () => {
        inside++
        maxInside = Math.max(maxInside, inside)
        await tick()
        inside--
      }),
    ),
  )
  assert.is(maxInside, 1)
})

/** Run `fn` holding every key (sorted, so that two callers never deadlock). */
function runAll<T>(locks: KeyedLock, keys: string[], fn: () => Promise<T>): Promise<T> {
  const sorted = [...new Set(keys)].sort()
  const step = (i: number): Promise<T> => (i === sorted.length ? fn() : locks.run(sorted[i]!, () => step(i + 1)))
  return step(0)
}

lock(
  'the in-process atomic steps of a storage without them: increment refuses a stored value that is not an integer, changing nothing, and takes no ttl',
  async () => {
    const map = memoryStorage()
    const plain = { get: map.get.bind(map), set: map.set.bind(map), delete: map.delete.bind(map), list: map.list.bind(map) }
    const steps = atomicSteps(plain)
    assert.is(await steps.increment('n', 2), 2)
    for (const value of ['5', 1.5, { n: 1 }]) {
      await plain.set('other', value)
      await rejects(steps.increment('other', 1), /not an integer/)
      assert.equal(await plain.get('other'), value)
    }
    // A plain Storage cannot read an entry's expiry, so it could not keep it: the fallback takes no ttl.
    // @ts-expect-error increment(key, by) only
    await steps.increment('n', 1, 60_000)
  },
)

lock(
  'the in-process compareAndSet of a store without atomic steps: expected undefined (only while absent) fails when a value is there, leaving it',
  async () => {
    const map = memoryStorage()
    const plain = { get: map.get.bind(map), set: map.set.bind(map), delete: map.delete.bind(map), list: map.list.bind(map) }
    await plain.set('k', 'a')
    assert.is(await atomicSteps(plain).compareAndSet('k', undefined, 'b'), false)
    assert.is(await plain.get('k'), 'a')
  },
)

lock.run()
