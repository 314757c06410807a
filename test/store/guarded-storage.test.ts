import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { guardStorage, StorageUnavailableError } from '../../src/store/guarded-storage.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { startGateway, waitFor } from '../helpers/gateway.ts'
import { requireAtomic, type Storage } from '../../src/ports/storage.ts'
import { withoutAtomicSteps } from '../helpers/shared-backends.ts'

const guarded = suite('storage failures')

/** A storage that can be switched off: every call then fails like an unreachable server. */
function switchable(): Storage & { down: boolean } {
  const inner = memoryStorage()
  const wrap =
    <A extends unknown[], R>(fn: (...args: A) => R) =>
    (...args: A): R => {
      if (state.down) throw new Error('ECONNREFUSED')
      return fn(...args)
    }
  const state = {
    down: false,
    get: wrap(inner.get.bind(inner)),
    set: wrap(inner.set.bind(inner)),
    delete: wrap(inner.delete.bind(inner)),
    list: wrap(inner.list.bind(inner)),
  } as Storage & { down: boolean }
  return state
}

guarded('a failing store answers 503 with a clear message and recovers without a restart', async () => {
  const storage = switchable()
  const t = await startGateway({ storage })
  try {
    const { authkey } = await t.register()
    storage.down = true
    const down = await t.post('/api/developer', { authkey, message: 'x', checkDispositivo: 'true' })
    assert.is(down.status, 503)
    assert.equal(down.body, { status: 503, message: 'Armazenamento indisponível. Tente novamente mais tarde.' })
    assert.is(down.headers.get('retry-after'), '5')
    storage.down = false
    const up = await t.post('/api/developer', { authkey, message: 'x', checkDispositivo: 'true' })
    assert.is(up.status, 404)
  } finally {
    storage.down = false
    await t.stop()
  }
})

guarded('a store call that hangs fails after the timeout instead of hanging the request', async () => {
  const hanging: Storage = {
    get: () => new Promise(() => {}),
    set: () => new Promise(() => {}),
    delete: () => new Promise(() => {}),
    async *list() {},
  }
  // The store never answers: only the guard's time-out can end the call.
  const storage = guardStorage(hanging, 50)
  await storage.get('k').then(
    () => assert.unreachable(),
    err => assert.instance(err, StorageUnavailableError),
  )
})

/** A storage whose every `get` waits until the test answers it (`answer(key, value)`); `asked` lists the keys that reached it. */
function answerable(): Storage & { asked: string[]; answer(key: string, value: unknown): void; fail(key: string, error: Error): void } {
  const waiting = new Map<string, { resolve: (value: unknown) => void; reject: (error: Error) => void }>()
  const asked: string[] = []
  return {
    asked,
    answer: (key, value) => waiting.get(key)!.resolve(value),
    fail: (key, error) => waiting.get(key)!.reject(error),
    get: <T>(key: string) => {
      asked.push(key)
      return new Promise<T | undefined>((resolve, reject) => waiting.set(key, { resolve: resolve as (value: unknown) => void, reject }))
    },
    set: async () => {},
    delete: async () => false,
    async *list() {},
  }
}

/** Whether a promise has settled, read without waiting. */
function settledFlag(promise: Promise<unknown>): { settled: boolean; error?: unknown } {
  const flag: { settled: boolean; error?: unknown } = { settled: false }
  promise.then(
    () => (flag.settled = true),
    error => Object.assign(flag, { settled: true, error }),
  )
  return flag
}

guarded('one call past the time-out fails the calls still waiting with it, and later calls fail at once: a request waits one time-out in all', async () => {
  const inner = answerable()
  const storage = guardStorage(inner, 200)
  const first = settledFlag(storage.get('first'))
  await new Promise(resolve => setTimeout(resolve, 100))
  const second = settledFlag(storage.get('second')) // its own deadline is 100 ms after the first's
  await waitFor(() => first.settled, 2000, 'the first call to time out')
  await new Promise(resolve => setImmediate(resolve))
  assert.instance(first.error, StorageUnavailableError)
  assert.ok(second.settled, 'the second call failed with the first, before its own deadline')
  assert.instance(second.error, StorageUnavailableError)

  // Hung: new calls fail at once, without reaching the store; the guard itself asks the store until it answers.
  await storage.get('refused').then(
    () => assert.unreachable('failed at once'),
    err => assert.instance(err, StorageUnavailableError),
  )
  assert.equal(inner.asked, ['first', 'second', '__zapgate_probe__'], 'the refused call never reached the store; the probe did')
  inner.answer('__zapgate_probe__', undefined)
  await new Promise(resolve => setImmediate(resolve))
  const after = storage.get('after')
  inner.answer('after', 'fine')
  assert.is(await after, 'fine', 'once the store answers, calls go through again')
})

guarded("an error from the probe (a driver's own time-out) does not end the hang; the next probe's answer does", async () => {
  const inner = answerable()
  const storage = guardStorage(inner, 80)
  await storage.get('stuck').catch(() => {})
  const probes = () => inner.asked.filter(key => key === '__zapgate_probe__').length
  assert.is(probes(), 1)
  inner.fail('__zapgate_probe__', new Error('driver time-out'))
  await new Promise(resolve => setImmediate(resolve))
  await storage.get('still').then(
    () => assert.unreachable('still hung'),
    err => assert.instance(err, StorageUnavailableError),
  )
  await waitFor(() => probes() === 2, 2000, 'the next probe')
  inner.answer('__zapgate_probe__', undefined)
  await new Promise(resolve => setImmediate(resolve))
  const next = storage.get('next')
  inner.answer('next', 'ok')
  assert.is(await next, 'ok')
  assert.not.ok(inner.asked.includes('still'), 'no call reached the store while it was taken for hung')
})

guarded('a late answer to a call that already failed shows the store is back', async () => {
  const inner = answerable()
  const storage = guardStorage(inner, 50)
  await storage.get('late').then(
    () => assert.unreachable(),
    err => assert.instance(err, StorageUnavailableError),
  )
  inner.answer('late', 'at last')
  await new Promise(resolve => setImmediate(resolve))
  const next = storage.get('next')
  const also = storage.get('also')
  inner.answer('next', 1)
  inner.answer('also', 2)
  assert.equal([await next, await also], [1, 2])
})

guarded('the atomic steps pass through: a lost race is a plain false, never an error', async () => {
  const inner = memoryStorage()
  const storage = requireAtomic(guardStorage(inner), 'test')
  assert.is(await storage.add('k', 'mine'), true)
  assert.is(await storage.add('k', 'theirs'), false)
  assert.is(await storage.compareAndSet('k', 'theirs', 'x'), false)
  assert.is(await storage.compareAndSet('k', 'mine', 'next'), true)
  assert.is(await storage.deleteIfEqual('k', 'mine'), false)
  assert.is(await storage.deleteIfEqual('k', 'next'), true)
  assert.is(await storage.increment('n', 2, 60_000), 2)
  assert.is(await inner.get('n'), 2)
})

guarded('a store error in the middle of an atomic step surfaces as StorageUnavailableError with the cause', async () => {
  const broken = new Error('ECONNRESET')
  const fail = async () => Promise.reject(broken)
  const storage = requireAtomic(guardStorage({ ...memoryStorage(), add: fail, compareAndSet: fail, deleteIfEqual: fail, increment: fail }), 'test')
  for (const [step, call] of [
    ['add', () => storage.add('k', 1)],
    ['compareAndSet', () => storage.compareAndSet('k', 1, 2)],
    ['deleteIfEqual', () => storage.deleteIfEqual('k', 1)],
    ['increment', () => storage.increment('k', 1)],
  ] as const) {
    await call().then(
      () => assert.unreachable(`${step} resolved`),
      err => {
        assert.instance(err, StorageUnavailableError)
        assert.is(err.message, `storage ${step} failed`)
        assert.is(err.cause, broken)
      },
    )
  }
})

guarded('an atomic step that hangs fails after the timeout instead of hanging the caller', async () => {
  const hang = () => new Promise<never>(() => {})
  const storage = requireAtomic(guardStorage({ ...memoryStorage(), add: hang, compareAndSet: hang, deleteIfEqual: hang, increment: hang }, 50), 'test')
  for (const call of [
    () => storage.add('k', 1),
    () => storage.compareAndSet('k', 1, 2),
    () => storage.deleteIfEqual('k', 1),
    () => storage.increment('k', 1),
  ]) {
    await call().then(
      () => assert.unreachable(),
      err => assert.instance(err, StorageUnavailableError),
    )
  }
})

guarded('a list whose store stops answering fails after the timeout, and a list while the store is hung fails at once', async () => {
  const inner = memoryStorage()
  await inner.set('item:1', 1)
  let hang = true
  let reached = 0
  const listing: Storage = {
    ...inner,
    async *list<T>(prefix: string): AsyncIterable<[string, T]> {
      reached++
      for await (const entry of inner.list<T>(prefix)) yield entry
      if (hang) await new Promise(() => {}) // the next page never comes
    },
  }
  const storage = guardStorage(listing, 50)
  const seen: string[] = []
  const listed = (async () => {
    for await (const [key] of storage.list('item:')) seen.push(key)
  })()
  const outcome = await Promise.race([
    listed.then(
      () => 'ended',
      err => err,
    ),
    new Promise(resolve => setTimeout(resolve, 1000, 'still waiting after 1 s')),
  ])
  assert.instance(outcome, StorageUnavailableError)
  assert.equal(seen, ['item:1'])
  // Hung (no probe answered yet: memoryStorage has no ping, and its get answers, so wait for the probe's answer first).
  hang = false
  const hungListing = guardStorage({ ...listing, get: () => new Promise(() => {}) }, 50)
  await hungListing.get('k').catch(() => {})
  const before = reached
  await (async () => {
    for await (const _ of hungListing.list('item:')) assert.unreachable('listed while hung')
  })().then(
    () => assert.unreachable('refused while hung'),
    err => assert.instance(err, StorageUnavailableError),
  )
  assert.is(reached, before, 'the refused list never reached the store')
})

guarded('a storage without atomic steps stays without them, so multi-process features refuse it', async () => {
  const storage = guardStorage(withoutAtomicSteps(memoryStorage()))
  assert.is(storage.add, undefined)
  assert.throws(
    () => requireAtomic(storage, 'Cluster mode'),
    /Cluster mode needs a storage with atomic steps, and this one lacks add, compareAndSet, deleteIfEqual, increment/,
  )
})

guarded(
  'a store method that answers a plain value, not a promise (a JavaScript adapter), is answered like a resolved one: the store is not taken for hung',
  async () => {
    const inner = memoryStorage()
    const plain = { ...inner, get: (() => 'plain') as unknown as Storage['get'] }
    const storage = guardStorage(plain, 50)
    assert.is(await storage.get('k'), 'plain')
    await new Promise(resolve => setTimeout(resolve, 100))
    assert.is(await storage.get('k'), 'plain', 'not refused as hung after the time-out')
  },
)

guarded.run()
