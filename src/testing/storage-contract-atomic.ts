import assert from 'node:assert/strict'
import { requireAtomic, type AtomicStorage } from '../ports/storage.ts'
import { collect, sleep } from './storage-harness.ts'

/** Registers a contract test; the body gets the storage, a key maker and a second storage on the same backend. */
export type AtomicIt = (
  name: string,
  body: (storage: AtomicStorage, key: (name: string) => string, scope: { second(): Promise<AtomicStorage> }) => Promise<void>,
) => void

/** The meaning of each atomic step, one storage at a time (the races are in storage-contract-races.ts). */
export function atomicSemantics(it: AtomicIt): void {
  it('add(key, value) stores the value when the key is absent and returns true', async (storage, key) => {
    assert.equal(await storage.add(key('a'), { owner: 'me' }), true)
    assert.deepEqual(await storage.get(key('a')), { owner: 'me' })
  })

  it('add(key, value) returns false and leaves a live value as it is', async (storage, key) => {
    await storage.set(key('a'), { owner: 'first' })
    assert.equal(await storage.add(key('a'), { owner: 'second' }), false)
    assert.deepEqual(await storage.get(key('a')), { owner: 'first' })
  })

  it('add(key, value) replaces an expired entry (it counts as absent)', async (storage, key) => {
    await storage.set(key('a'), 'old', 100)
    await sleep(250)
    assert.equal(await storage.add(key('a'), 'new'), true)
    assert.equal(await storage.get(key('a')), 'new')
    await sleep(150)
    assert.equal(await storage.get(key('a')), 'new', 'the new entry has no ttl')
  })

  it('add(key, value, ttlMs) expires the value, and the key can be added again', async (storage, key) => {
    assert.equal(await storage.add(key('a'), 'claim', 800), true)
    assert.equal(await storage.add(key('a'), 'other', 800), false)
    await sleep(1000)
    assert.equal(await storage.get(key('a')), undefined)
    assert.equal(await storage.add(key('a'), 'again'), true)
  })

  it('add and compareAndSet store a copy (mutating the value afterwards does not change the stored value)', async (storage, key) => {
    const added = { list: [1], nested: { n: 1 } }
    assert.equal(await storage.add(key('a'), added), true)
    added.list.push(2)
    added.nested.n = 99
    assert.deepEqual(await storage.get(key('a')), { list: [1], nested: { n: 1 } })
    const next = { list: [3] }
    assert.equal(await storage.compareAndSet(key('a'), { list: [1], nested: { n: 1 } }, next), true)
    next.list.push(4)
    assert.deepEqual(await storage.get(key('a')), { list: [3] })
    const created = { list: [5] }
    assert.equal(await storage.compareAndSet(key('b'), undefined, created), true)
    created.list.push(6)
    assert.deepEqual(await storage.get(key('b')), { list: [5] })
  })

  it('a stored null is a live entry: add and compareAndSet(key, undefined) leave it, the steps expecting null match it', async (storage, key) => {
    await storage.set(key('a'), null)
    assert.equal(await storage.add(key('a'), 'taken'), false)
    assert.equal(await storage.compareAndSet(key('a'), undefined, 'taken'), false)
    assert.equal(await storage.get(key('a')), null)
    assert.equal(await storage.compareAndSet(key('a'), null, 'replaced'), true)
    assert.equal(await storage.get(key('a')), 'replaced')
    await storage.set(key('b'), null)
    assert.equal(await storage.deleteIfEqual(key('b'), 'other'), false)
    assert.equal(await storage.deleteIfEqual(key('b'), null), true)
    assert.equal(await storage.get(key('b')), undefined)
  })

  it('compareAndSet(key, expected, next) replaces an equal value and returns true', async (storage, key) => {
    await storage.set(key('a'), { version: 1, tags: ['x'] })
    assert.equal(await storage.compareAndSet(key('a'), { version: 1, tags: ['x'] }, { version: 2, tags: [] }), true)
    assert.deepEqual(await storage.get(key('a')), { version: 2, tags: [] })
  })

  it('compareAndSet(key, expected, next) returns false and changes nothing when the value differs', async (storage, key) => {
    await storage.set(key('a'), { version: 2 })
    assert.equal(await storage.compareAndSet(key('a'), { version: 1 }, { version: 3 }), false)
    assert.deepEqual(await storage.get(key('a')), { version: 2 })
  })

  it('compareAndSet compares by deep JSON equality: key order does not matter, types and nesting do', async (storage, key) => {
    const stored = { b: { y: [1, { z: null }], x: 'x' }, a: 1, 10: true, 2: 'two' }
    await storage.set(key('a'), stored)
    for (const different of [
      { ...stored, a: '1' },
      { ...stored, extra: 0 },
      { ...stored, b: { y: [1, { z: 0 }], x: 'x' } },
      { ...stored, b: { y: [{ z: null }, 1], x: 'x' } },
      [stored],
      'text',
    ]) {
      assert.equal(await storage.compareAndSet(key('a'), different, 'replaced'), false, JSON.stringify(different))
    }
    const reordered = { 2: 'two', a: 1, 10: true, b: { x: 'x', y: [1, { z: null }] }, ignored: undefined }
    assert.equal(await storage.compareAndSet(key('a'), reordered, 'replaced'), true)
    assert.equal(await storage.get(key('a')), 'replaced')
    await storage.set(key('s'), ':starts with a colon')
    assert.equal(await storage.compareAndSet(key('s'), ':starts with a colon', 0), true)
    assert.equal(await storage.compareAndSet(key('s'), 0, false), true)
    assert.equal(await storage.compareAndSet(key('s'), false, null), true)
    assert.equal(await storage.compareAndSet(key('s'), null, ''), true)
    assert.equal(await storage.get(key('s')), '')
  })

  it('compareAndSet(key, undefined, next) sets only an absent key (an expired entry counts as absent)', async (storage, key) => {
    assert.equal(await storage.compareAndSet(key('a'), undefined, 'first'), true)
    assert.equal(await storage.compareAndSet(key('a'), undefined, 'second'), false)
    assert.equal(await storage.get(key('a')), 'first')
    await storage.set(key('b'), 'old', 100)
    await sleep(250)
    assert.equal(await storage.compareAndSet(key('b'), undefined, 'new'), true)
    assert.equal(await storage.get(key('b')), 'new')
  })

  it('compareAndSet(key, expected, next) returns false for an absent or expired key', async (storage, key) => {
    assert.equal(await storage.compareAndSet(key('missing'), 'x', 'y'), false)
    assert.equal(await storage.get(key('missing')), undefined)
    await storage.set(key('a'), 'x', 100)
    await sleep(250)
    assert.equal(await storage.compareAndSet(key('a'), 'x', 'y'), false)
    assert.equal(await storage.get(key('a')), undefined)
  })

  it('compareAndSet(key, expected, next, ttlMs) expires the new value; without ttlMs an earlier ttl is dropped', async (storage, key) => {
    await storage.set(key('a'), 1)
    assert.equal(await storage.compareAndSet(key('a'), 1, 2, 800), true)
    await storage.set(key('b'), 1, 800)
    assert.equal(await storage.compareAndSet(key('b'), 1, 2), true)
    await sleep(1000)
    assert.equal(await storage.get(key('a')), undefined)
    assert.equal(await storage.get(key('b')), 2)
  })

  it('compareAndSet(key, expected, undefined) rejects and changes nothing (deleteIfEqual removes)', async (storage, key) => {
    await storage.set(key('a'), 1)
    await assert.rejects(storage.compareAndSet(key('a'), 1, undefined))
    assert.equal(await storage.get(key('a')), 1)
  })

  it('deleteIfEqual(key, expected) removes an equal value and returns true', async (storage, key) => {
    await storage.set(key('a'), { owner: 'me', n: [1] })
    assert.equal(await storage.deleteIfEqual(key('a'), { n: [1], owner: 'me' }), true)
    assert.equal(await storage.get(key('a')), undefined)
    assert.deepEqual(await collect(storage, key('')), [])
  })

  it('deleteIfEqual(key, expected) returns false and keeps a different value; false for an absent or expired key', async (storage, key) => {
    await storage.set(key('a'), { owner: 'someone else' })
    assert.equal(await storage.deleteIfEqual(key('a'), { owner: 'me' }), false)
    assert.deepEqual(await storage.get(key('a')), { owner: 'someone else' })
    assert.equal(await storage.deleteIfEqual(key('missing'), { owner: 'me' }), false)
    await storage.set(key('b'), 'x', 100)
    await sleep(250)
    assert.equal(await storage.deleteIfEqual(key('b'), 'x'), false)
  })

  it('increment(key, by) counts from 0 for an absent key and answers each new value', async (storage, key) => {
    assert.equal(await storage.increment(key('n'), 1), 1)
    assert.equal(await storage.increment(key('n'), 5), 6)
    assert.equal(await storage.increment(key('n'), -2), 4)
    assert.equal(await storage.get(key('n')), 4)
    await storage.set(key('m'), 41)
    assert.equal(await storage.increment(key('m'), 1), 42)
  })

  it('increment(key, by, ttlMs) sets the expiry only when it creates the entry (a fixed window)', async (storage, key) => {
    assert.equal(await storage.increment(key('w'), 1, 800), 1)
    await sleep(100)
    assert.equal(await storage.increment(key('w'), 1, 60_000), 2, 'a later ttl does not move the window')
    await sleep(1000)
    assert.equal(await storage.get(key('w')), undefined)
    assert.equal(await storage.increment(key('w'), 1, 60_000), 1, 'an expired counter starts again')
    assert.equal(await storage.increment(key('forever'), 3), 3)
    await sleep(50)
    assert.equal(await storage.get(key('forever')), 3)
  })

  it('increment(key, by) rejects and changes nothing when the stored value is not a safe integer', async (storage, key) => {
    for (const [i, value] of ['7', { n: 1 }, 1.5, null, [1], 1e20].entries()) {
      await storage.set(key(`v${i}`), value)
      await assert.rejects(storage.increment(key(`v${i}`), 1), `value ${JSON.stringify(value)}`)
      assert.deepEqual(await storage.get(key(`v${i}`)), value)
    }
    await assert.rejects(storage.increment(key('bad-by'), 0.5))
  })

  it('increment(key, by) rejects and changes nothing when the sum would not be a safe integer', async (storage, key) => {
    for (const [i, [value, by]] of [
      [Number.MAX_SAFE_INTEGER, 1],
      [-Number.MAX_SAFE_INTEGER, -1],
      [2 ** 52, 2 ** 52],
    ].entries()) {
      await storage.set(key(`s${i}`), value)
      await assert.rejects(storage.increment(key(`s${i}`), by), `${value} + ${by}`)
      assert.equal(await storage.get(key(`s${i}`)), value, `${value} + ${by} was refused, and the stored value changed`)
      assert.equal(await storage.increment(key(`s${i}`), -Math.sign(by)), value - Math.sign(by), 'the counter still counts the other way')
    }
  })

  it('values written by the atomic steps read back through get and list, with their ttl', async (storage, key) => {
    await storage.add(key('added'), { a: 'olá 🚀', n: [1, null] })
    await storage.compareAndSet(key('swapped'), undefined, ':base64:aGVsbG8=')
    await storage.increment(key('counted'), 9)
    await storage.add(key('short'), 'soon gone', 100)
    await sleep(250)
    assert.deepEqual(await collect(storage, key('')), [
      [key('added'), { a: 'olá 🚀', n: [1, null] }],
      [key('counted'), 9],
      [key('swapped'), ':base64:aGVsbG8='],
    ])
  })
}

/** For a storage declared single-process: it has none of the atomic steps, and requireAtomic says so. */
export function noAtomicSteps(storage: { add?: unknown; compareAndSet?: unknown; deleteIfEqual?: unknown; increment?: unknown }): void {
  for (const step of ['add', 'compareAndSet', 'deleteIfEqual', 'increment'] as const) {
    assert.equal(storage[step], undefined, `a storage declared without atomic steps has ${step}: declare { atomic: true } and test them`)
  }
  assert.throws(
    () => requireAtomic(storage as never, 'Running several processes'),
    /Running several processes needs a storage with atomic steps, and this one lacks add, compareAndSet, deleteIfEqual, increment/,
  )
}
