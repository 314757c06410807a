import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { guardStorage, StorageUnavailableError } from '../../src/store/guarded-storage.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { startGateway } from '../helpers/gateway.ts'
import type { Storage } from '../../src/ports/storage.ts'

const guarded = suite('storage failures')

/** A storage that can be switched off: every call then fails like an unreachable server. */
function switchable(): Storage & { down: boolean } {
  const inner = memoryStorage()
  const wrap = <A extends unknown[], R>(fn: (...args: A) => R) => (...args: A): R => {
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
  const storage = guardStorage(hanging, 50)
  const started = Date.now()
  await storage.get('k').then(
    () => assert.unreachable(),
    err => assert.instance(err, StorageUnavailableError),
  )
  assert.ok(Date.now() - started < 2000)
})

guarded.run()
