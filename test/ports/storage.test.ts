import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { prefixedStorage, requireAtomic, supportsAtomic } from '../../src/ports/storage.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { withoutAtomicSteps } from '../helpers/shared-backends.ts'

const port = suite('storage port')

port('prefixedStorage passes the atomic steps through, under its prefix', async () => {
  const inner = memoryStorage()
  const view = requireAtomic(prefixedStorage(inner, 'transport:'), 'test')
  assert.is(await view.add('lease', { owner: 'a' }, 60_000), true)
  assert.is(await view.add('lease', { owner: 'b' }), false)
  assert.equal(await inner.get('transport:lease'), { owner: 'a' })
  assert.is(await inner.get('lease'), undefined)
  assert.is(await view.compareAndSet('lease', { owner: 'a' }, { owner: 'b' }), true)
  assert.is(await view.increment('count', 3), 3)
  assert.is(await inner.get('transport:count'), 3)
  assert.is(await view.deleteIfEqual('lease', { owner: 'b' }), true)
  assert.is(await inner.get('transport:lease'), undefined)
})

port('prefixedStorage of a storage without atomic steps has none', () => {
  const view = prefixedStorage(withoutAtomicSteps(memoryStorage()), 'p:')
  assert.is(supportsAtomic(view), false)
  for (const step of ['add', 'compareAndSet', 'deleteIfEqual', 'increment'] as const) assert.is(view[step], undefined)
})

port('requireAtomic names the feature and every missing step, and what to use instead', () => {
  const partial = { ...withoutAtomicSteps(memoryStorage()), add: async () => true }
  assert.is(supportsAtomic(partial), false)
  try {
    requireAtomic(partial, 'Webhook delivery across processes')
    assert.unreachable()
  } catch (error) {
    assert.is(
      (error as Error).message,
      'Webhook delivery across processes needs a storage with atomic steps, and this one lacks compareAndSet, deleteIfEqual, increment: ' +
        'use the Keyv storage adapter with redis:// or postgres:// (or sqlite:// for processes on one host), ' +
        'or implement add, compareAndSet, deleteIfEqual and increment in your Storage (see the Storage port)',
    )
  }
  const full = memoryStorage()
  assert.is(requireAtomic(full, 'x'), full)
})

port.run()
