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

const test = suite('scheduler: a sent item whose outcome the store did not take, then a graceful stop')

/** A storage whose compare-and-sets of scheduled items fail (a hung store) while `down`. */
function blippingStore(storage: Storage) {
  const state = { down: false, failures: 0 }
  const view = new Proxy(storage, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (typeof value !== 'function') return value
      if (name !== 'compareAndSet') return value.bind(target)
      return async (key: string, ...rest: unknown[]) => {
        if (state.down && key.startsWith('schedule:')) {
          state.failures++
          throw new StorageUnavailableError('compareAndSet', { cause: new Error('timed out') })
        }
        return value.call(target, key, ...rest)
      }
    },
  })
  return { view, state }
}

test('the message went out, the store failed to record it, the gateway stops once the store answers again: the next process does not send it again', async () => {
  const storage = memoryStorage()
  const blip = blippingStore(storage)
  const device = { id: 'd1', accountId: 'a1', linked: true } as Device
  const devices = { get: async () => device, load: async () => device, status: async () => ({ connected: true, state: 'open' }) } as unknown as Devices
  const accounts = { get: async () => ({}), active: () => true } as never
  let sends = 0
  const messenger = {
    perform: async () => {
      sends++
      blip.state.down = true // the store hangs right after the network took the message
      return `m${sends}`
    },
  } as unknown as Messenger
  const timing = { retryMs: [50, 50, 50], pollMs: 100, leaseMs: 300, maxWaitMs: 60_000 }
  const action: Action = { kind: 'send', to: '5511988880002', message: { kind: 'text', text: 'oi' } }
  const first = createScheduler(
    createScheduleStore(blip.view, new KeyedLock()),
    messenger,
    { devices, accounts, liveness: soloLiveness() },
    timing,
    silentLogger,
  )
  first.start()
  await first.schedule(device, action, { at: Date.now(), text: '2030-01-01 00:00:00' })
  await waitFor(() => sends === 1 && blip.state.failures > 0, 5_000, 'the send, and the failed record of it')
  blip.state.down = false // the store answers again (a blip of a second or two) ...
  await first.close() // ... and the gateway is stopped (a deploy) before the scheduler's 5 s retry
  // The next process on the store (the first one is gone).
  const store = createScheduleStore(storage, new KeyedLock())
  const next = createScheduler(store, messenger, { devices, accounts, liveness: soloLiveness() }, timing, silentLogger)
  try {
    next.start()
    await new Promise(resolve => setTimeout(resolve, 1_000))
    assert.equal(sends, 1, 'the scheduled message was sent twice')
  } finally {
    await next.close()
  }
})

test.run()
