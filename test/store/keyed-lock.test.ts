import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { KeyedLock } from '../../src/store/keyed-lock.ts'

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

lock.run()
