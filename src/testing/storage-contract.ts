import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { Storage } from '../ports/storage.ts'

/**
 * The behaviour every Storage adapter must have, as a runner-neutral suite (node:assert only):
 * `storageContract(test, makeStorage)` registers one test per behaviour with `test(name, fn)`.
 * `makeStorage` is called once per test and the storage is closed at the end of that test, so give
 * a fresh instance each time. Each test writes under its own random key prefix and deletes what it
 * wrote, so the suite can run against a shared Redis or database without clearing it.
 */
export function storageContract(
  test: (name: string, fn: () => Promise<void>) => void,
  makeStorage: () => Promise<Storage>,
): void {
  const it = (name: string, body: (storage: Storage, key: (name: string) => string) => Promise<void>) =>
    test(name, () => withStorage(makeStorage, body))

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
      { '': 'empty key', 'ключ': 'значение', 'a:b': 1 },
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
    assert.deepEqual(listed.map(([, value]) => (value as { id: string }).id), ids)
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
    assert.deepEqual(values, Array.from({ length: n }, (_, i) => ({ i })))
  })

  it('concurrent sets of one key leave one of the written values', async (storage, key) => {
    await Promise.all(Array.from({ length: 50 }, (_, i) => storage.set(key('same'), { i })))
    const value = await storage.get<{ i: number }>(key('same'))
    assert.ok(value && value.i >= 0 && value.i < 50, `unexpected ${JSON.stringify(value)}`)
  })

  it('ping() resolves when the store is reachable', async storage => {
    if (storage.ping) await storage.ping()
  })
}

// --- Internal helpers ---

async function withStorage(
  makeStorage: () => Promise<Storage>,
  body: (storage: Storage, key: (name: string) => string) => Promise<void>,
): Promise<void> {
  const storage = await makeStorage()
  const prefix = `contract-${randomBytes(6).toString('hex')}:`
  const written = new Set<string>()
  const recording: Storage = {
    get: key => storage.get(key),
    set: (key, value, ttlMs) => (written.add(key), storage.set(key, value, ttlMs)),
    delete: key => storage.delete(key),
    list: prefix => storage.list(prefix),
    ping: storage.ping && (() => storage.ping!()),
  }
  try {
    await body(recording, name => prefix + name)
  } finally {
    try {
      await Promise.all([...written].map(key => storage.delete(key)))
    } finally {
      await storage.close?.()
    }
  }
}

async function collect(storage: Storage, prefix: string): Promise<Array<[string, unknown]>> {
  const entries: Array<[string, unknown]> = []
  for await (const entry of storage.list(prefix)) entries.push(entry)
  return entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
}

function sleep(ms: number): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, ms))
}
