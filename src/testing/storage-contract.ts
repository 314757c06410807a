import assert from 'node:assert/strict'
import { requireAtomic, type Storage } from '../ports/storage.ts'
import { atomicSemantics, noAtomicSteps } from './storage-contract-atomic.ts'
import { atomicRaces } from './storage-contract-races.ts'
import { collect, sleep, withStorage, type StorageContractOptions } from './storage-harness.ts'

export type { StorageContractOptions } from './storage-harness.ts'

/**
 * The behaviour every Storage adapter must have, as a runner-neutral suite (node:assert only):
 * `storageContract(test, makeStorage, options)` registers one test per behaviour with `test(name, fn)`.
 * `makeStorage` is called once per test and the storage is closed at the end of that test, so give
 * a fresh instance each time. Each test writes under its own random key prefix and deletes what it
 * wrote, so the suite can run against a shared Redis or database without clearing it.
 *
 * The atomic steps (add, compareAndSet, deleteIfEqual, increment) are tested too, including races
 * of 50 contenders split over two Storage objects on one backend: give `connectAgain` so those are
 * two real connections. A storage for one process only passes `{ atomic: false }`.
 */
export function storageContract(
  test: (name: string, fn: () => Promise<void>) => void,
  makeStorage: () => Promise<Storage>,
  options: StorageContractOptions = {},
): void {
  const it = (name: string, body: (storage: Storage, key: (name: string) => string) => Promise<void>) =>
    test(name, () => withStorage(makeStorage, options, scope => body(scope.storage, scope.key)))

  it('get(key) returns undefined for a missing key', async (storage, key) => {
    assert.equal(await storage.get(key('missing')), undefined)
  })

  it('set(key, value) then get(key) returns an equal value', async (storage, key) => {
    await storage.set(key('a'), { name: 'Ana', tags: ['x'] })
    assert.deepEqual(await storage.get(key('a')), { name: 'Ana', tags: ['x'] })
  })

  it('set(key, value) replaces an existing value', async (storage, key) => {
    await storage.set(key('a'), { version: 1 })
    await storage.set(key('a'), { version: 2 })
    assert.deepEqual(await storage.get(key('a')), { version: 2 })
  })

  it('values round-trip: nested objects, arrays, unicode, numbers, booleans, null', async (storage, key) => {
    const values: unknown[] = [
      { a: { b: { c: [1, { d: 'deep' }] } }, empty: {}, list: [] },
      [1, 'two', [3], { four: 4 }, null, true],
      'olá, 世界 🚀 "quotes" \\ back\nslash\ttab',
      ':starts with a colon',
      ':base64:aGVsbG8=',
      '',
      0,
      -1.5,
      Number.MAX_SAFE_INTEGER,
      true,
      false,
      null,
      { '': 'empty key', ключ: 'значение', 'a:b': 1 },
    ]
    await Promise.all(values.map((value, i) => storage.set(key(`v${i}`), value)))
    for (const [i, value] of values.entries()) assert.deepEqual(await storage.get(key(`v${i}`)), value, `value #${i}`)
  })

  it('set(key, value) stores a copy (mutating the input afterwards does not change the stored value)', async (storage, key) => {
    const value = { list: [1], nested: { n: 1 } }
    await storage.set(key('a'), value)
    value.list.push(2)
    value.nested.n = 99
    assert.deepEqual(await storage.get(key('a')), { list: [1], nested: { n: 1 } })
  })

  it('get(key) returns a copy (mutating the result does not change the stored value)', async (storage, key) => {
    await storage.set(key('a'), { list: [1] })
    const first = await storage.get<{ list: number[] }>(key('a'))
    first!.list.push(2)
    assert.deepEqual(await storage.get(key('a')), { list: [1] })
  })

  it('list(prefix) yields a copy of each value (mutating a listed value does not change the stored value)', async (storage, key) => {
    await storage.set(key('a'), { list: [1] })
    for await (const [, value] of storage.list<{ list: number[] }>(key(''))) value.list.push(2)
    assert.deepEqual(await storage.get(key('a')), { list: [1] })
    assert.deepEqual(await collect(storage, key('')), [[key('a'), { list: [1] }]])
  })

  it('a stored null is a live entry: get answers null, list yields it, delete removes it and answers true', async (storage, key) => {
    await storage.set(key('a'), null)
    assert.equal(await storage.get(key('a')), null)
    assert.deepEqual(await collect(storage, key('')), [[key('a'), null]])
    assert.equal(await storage.delete(key('a')), true)
    assert.equal(await storage.get(key('a')), undefined)
    assert.equal(await storage.delete(key('a')), false)
  })

  it('set(key, value, ttlMs) expires the value', async (storage, key) => {
    await storage.set(key('a'), 'soon gone', 150)
    assert.equal(await storage.get(key('a')), 'soon gone')
    await sleep(300)
    assert.equal(await storage.get(key('a')), undefined)
  })

  it('set(key, value) without ttlMs removes an earlier ttl', async (storage, key) => {
    await storage.set(key('a'), 'first', 100)
    await storage.set(key('a'), 'second')
    await sleep(250)
    assert.equal(await storage.get(key('a')), 'second')
  })

  it('delete(key) returns true for an existing key and removes it', async (storage, key) => {
    await storage.set(key('a'), 1)
    assert.equal(await storage.delete(key('a')), true)
    assert.equal(await storage.get(key('a')), undefined)
  })

  it('delete(key) returns false for a missing key', async (storage, key) => {
    assert.equal(await storage.delete(key('missing')), false)
  })

  it('delete(key) returns false for an expired key (there was no live entry), and it stays absent', async (storage, key) => {
    await storage.set(key('a'), 'soon gone', 100)
    await sleep(250)
    assert.equal(await storage.delete(key('a')), false)
    assert.equal(await storage.get(key('a')), undefined)
    assert.equal(await storage.delete(key('a')), false)
  })

  it('list(prefix) yields only keys with that prefix, with their values', async (storage, key) => {
    await storage.set(key('users:1'), { n: 1 })
    await storage.set(key('users:2'), { n: 2 })
    await storage.set(key('usersX'), { n: 3 })
    await storage.set(key('groups:1'), { n: 4 })
    assert.deepEqual(await collect(storage, key('users:')), [
      [key('users:1'), { n: 1 }],
      [key('users:2'), { n: 2 }],
    ])
  })

  it('list(prefix) yields nothing when no key has that prefix', async (storage, key) => {
    await storage.set(key('a'), 1)
    assert.deepEqual(await collect(storage, key('b')), [])
  })

  it('list(prefix) treats _ and % literally', async (storage, key) => {
    await storage.set(key('abc'), 1)
    await storage.set(key('a_c'), 2)
    await storage.set(key('a%c'), 3)
    assert.deepEqual(await collect(storage, key('a_')), [[key('a_c'), 2]])
    assert.deepEqual(await collect(storage, key('a%')), [[key('a%c'), 3]])
  })

  it('list(prefix) treats * ? [ ] \\ literally', async (storage, key) => {
    await storage.set(key('a*b'), 1)
    await storage.set(key('a?b'), 2)
    await storage.set(key('a[b]'), 3)
    await storage.set(key('a\\b'), 4)
    await storage.set(key('axb'), 5)
    assert.deepEqual(await collect(storage, key('a*')), [[key('a*b'), 1]])
    assert.deepEqual(await collect(storage, key('a?')), [[key('a?b'), 2]])
    assert.deepEqual(await collect(storage, key('a[')), [[key('a[b]'), 3]])
    assert.deepEqual(await collect(storage, key('a\\')), [[key('a\\b'), 4]])
  })

  it('list(prefix) is case-sensitive', async (storage, key) => {
    await storage.set(key('abc'), 1)
    await storage.set(key('ABC'), 2)
    assert.deepEqual(await collect(storage, key('a')), [[key('abc'), 1]])
  })

  it('list(prefix) omits expired entries', async (storage, key) => {
    await storage.set(key('short'), 1, 100)
    await storage.set(key('long'), 2)
    await sleep(250)
    assert.deepEqual(await collect(storage, key('')), [[key('long'), 2]])
  })

  it('list(prefix) yields every entry of a large prefix', async (storage, key) => {
    const ids = Array.from({ length: 1234 }, (_, i) => String(i).padStart(4, '0'))
    await Promise.all(ids.map(id => storage.set(key(`item:${id}`), { id })))
    const listed = await collect(storage, key('item:'))
    assert.equal(listed.length, ids.length)
    assert.deepEqual(
      listed.map(([, value]) => (value as { id: string }).id),
      ids,
    )
  })

  it('list(prefix) yields every entry while the caller deletes the ones it has seen', async (storage, key) => {
    const ids = Array.from({ length: 1100 }, (_, i) => String(i).padStart(4, '0'))
    await Promise.all(ids.map(id => storage.set(key(`due:${id}`), id)))
    const seen: string[] = []
    for await (const [k, value] of storage.list<string>(key('due:'))) {
      seen.push(value)
      assert.equal(await storage.delete(k), true)
    }
    assert.deepEqual(seen.sort(), ids)
    assert.deepEqual(await collect(storage, key('due:')), [])
  })

  it('keys with : @ . + - _ characters round-trip', async (storage, key) => {
    const names = ['a:b:c', 'user@example.com', '5511999999999@s.whatsapp.net', 'v1.2.3', 'a+b=c/d', 'x-y_z', 'Zm9v-YmFy_', '~!$&()\'",;', 'olá:世界']
    await Promise.all(names.map((name, i) => storage.set(key(name), i)))
    for (const [i, name] of names.entries()) assert.equal(await storage.get(key(name)), i, name)
    assert.deepEqual((await collect(storage, key(''))).map(([k]) => k).sort(), names.map(key).sort())
    assert.deepEqual(await collect(storage, key('user@')), [[key('user@example.com'), 1]])
  })

  it('concurrent sets of different keys all land', async (storage, key) => {
    const n = 200
    await Promise.all(Array.from({ length: n }, (_, i) => storage.set(key(`c${i}`), { i })))
    const values = await Promise.all(Array.from({ length: n }, (_, i) => storage.get(key(`c${i}`))))
    assert.deepEqual(
      values,
      Array.from({ length: n }, (_, i) => ({ i })),
    )
  })

  it('concurrent sets of one key leave one of the written values', async (storage, key) => {
    await Promise.all(Array.from({ length: 50 }, (_, i) => storage.set(key('same'), { i })))
    const value = await storage.get<{ i: number }>(key('same'))
    assert.ok(value && value.i >= 0 && value.i < 50, `unexpected ${JSON.stringify(value)}`)
  })

  if (options.ping === false) {
    it('has no ping(), as its options say (the health check counts it reachable without asking it)', async storage => {
      assert.equal(storage.ping, undefined, 'the storage has ping(): drop { ping: false } so that the contract tests it')
    })
  } else {
    it('has ping(), which resolves while the store is reachable', async storage => {
      assert.equal(
        typeof storage.ping,
        'function',
        'the storage has no ping(): GET /health could not probe it (pass { ping: false } if there is nothing to probe)',
      )
      assert.equal(await storage.ping!(), undefined)
    })
  }

  if (options.atomic === false) {
    it('has none of the atomic steps, so requireAtomic refuses it for several processes', async storage => noAtomicSteps(storage))
    return
  }
  const atomicIt = (name: string, body: Parameters<Parameters<typeof atomicSemantics>[0]>[1]) =>
    test(name, () =>
      withStorage(makeStorage, options, scope =>
        body(requireAtomic(scope.storage, 'The storage contract (pass { atomic: false } for a single-process storage)'), scope.key, {
          second: async () => requireAtomic(await scope.second(), 'The second connection of the storage contract'),
        }),
      ),
    )
  atomicSemantics(atomicIt)
  atomicRaces(atomicIt)
}
