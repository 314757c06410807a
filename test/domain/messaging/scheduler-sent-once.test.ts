import assert from 'node:assert/strict'
import { suite } from 'uvu'
import type { Device, Devices } from '../../../src/domain/devices.ts'
import type { Action } from '../../../src/domain/messaging/actions.ts'
import type { Messenger } from '../../../src/domain/messaging/messenger.ts'
import { createScheduleStore } from '../../../src/domain/messaging/schedule-store.ts'
import { createScheduler } from '../../../src/domain/messaging/scheduler.ts'
import { silentLogger } from '../../../src/logger.ts'
import type { Storage } from '../../../src/ports/storage.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { StorageUnavailableError } from '../../../src/store/guarded-storage.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { soloLiveness } from '../../helpers/solo-liveness.ts'

/**
 * Each schedule is sent once (docs/scaling.md, "Guaranteed"): a message the network took is never
 * sent again because the store failed to remove its item right after (a hung store answers
 * StorageUnavailableError for 2 s); the removal is tried again instead.
 */
const test = suite('scheduler: a sent item whose removal failed is not sent again')

/** A storage whose first removal of a scheduled item fails as a hung store's does. */
function failingFirstRemoval(storage: Storage): Storage {
  let failed = false
  return new Proxy(storage, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (typeof value !== 'function') return value
      if (name !== 'delete') return value.bind(target)
      return async (key: string) => {
        if (!failed && key.startsWith('schedule:')) {
          failed = true
          throw new StorageUnavailableError('delete', { cause: new Error('timed out') })
        }
        return value.call(target, key)
      }
    },
  })
}

test('the store fails to remove a sent item once: the message goes out once and the item is removed', async () => {
  const storage = memoryStorage()
  const store = createScheduleStore(failingFirstRemoval(storage), new KeyedLock())
  const device = { id: 'd1', accountId: 'a1', linked: true } as Device
  const devices = { get: async () => device, load: async () => device, status: async () => ({ connected: true, state: 'open' }) } as unknown as Devices
  const accounts = { get: async () => ({}), active: () => true } as never
  let sends = 0
  const messenger = { perform: async () => (sends++, `m${sends}`) } as unknown as Messenger
  const timing = { retryMs: [50, 50, 50], pollMs: 100, leaseMs: 300, maxWaitMs: 60_000 }
  const scheduler = createScheduler(store, messenger, { devices, accounts, liveness: soloLiveness() }, timing, silentLogger)
  const action: Action = { kind: 'send', to: '5511988880002', message: { kind: 'text', text: 'oi' } }
  try {
    scheduler.start()
    await scheduler.schedule(device, action, { at: Date.now(), text: '2030-01-01 00:00:00' })
    await waitFor(async () => (await store.forDevice('d1')).length === 0, 5_000, 'the item removed')
    await new Promise(resolve => setTimeout(resolve, 500)) // retries and claim ends past
    assert.equal(sends, 1, 'sent once')
    assert.deepEqual(await store.forDevice('d1'), [])
  } finally {
    await scheduler.close()
  }
})

test.run()
