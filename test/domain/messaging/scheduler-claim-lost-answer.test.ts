import assert from 'node:assert/strict'
import { suite } from 'uvu'
import type { Device, Devices } from '../../../src/domain/devices.ts'
import type { Action } from '../../../src/domain/messaging/actions.ts'
import type { Messenger } from '../../../src/domain/messaging/messenger.ts'
import { createScheduleStore, type ScheduleItem } from '../../../src/domain/messaging/schedule-store.ts'
import { createScheduler } from '../../../src/domain/messaging/scheduler.ts'
import { silentLogger } from '../../../src/logger.ts'
import type { Storage } from '../../../src/ports/storage.ts'
import { StorageUnavailableError } from '../../../src/store/guarded-storage.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { soloLiveness } from '../../helpers/solo-liveness.ts'

/**
 * A claim whose write reached the store but whose answer was lost (the call rejected, as a hung
 * store's does after 2 s) is the claimer's own: on its next try (5 s later) it takes it again at
 * once and sends. Before, it honoured its own claim for its whole length (the send time-out plus
 * 60 s, 90 s by default) before the message went.
 */
const test = suite('scheduler: a claim whose answer was lost')

/** `storage` whose first claim of a scheduled item lands, then rejects as if its answer were lost. */
function claimAnswerLost(storage: Storage): Storage {
  let lost = false
  return new Proxy(storage, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (typeof value !== 'function') return value
      if (name !== 'compareAndSet') return value.bind(target)
      return async (key: string, expected: unknown, next: ScheduleItem, ttlMs?: number) => {
        const swapped = await value.call(target, key, expected, next, ttlMs)
        if (lost || !swapped || !key.startsWith('schedule:') || !next.claim || next.quota) return swapped
        lost = true
        throw new StorageUnavailableError('compareAndSet', { cause: new Error('timed out') })
      }
    },
  })
}

test('the claim landed but its answer was lost: the message is sent on the next try, once, not after the claim runs out', async () => {
  const store = createScheduleStore(claimAnswerLost(memoryStorage()), new KeyedLock())
  const device = { id: 'd1', accountId: 'a1', linked: true } as Device
  const devices = { get: async () => device, load: async () => device, status: async () => ({ connected: true, state: 'open' }) } as unknown as Devices
  const accounts = { get: async () => ({}), active: () => true } as never
  let sends = 0
  const messenger = { perform: async () => (sends++, `m${sends}`) } as unknown as Messenger
  const timing = { retryMs: [50, 50, 50], pollMs: 100, leaseMs: 120_000, maxWaitMs: 600_000 }
  const scheduler = createScheduler(store, messenger, { devices, accounts, liveness: soloLiveness() }, timing, silentLogger)
  const action: Action = { kind: 'send', to: '5511988880002', message: { kind: 'text', text: 'oi' } }
  try {
    scheduler.start()
    await scheduler.schedule(device, action, { at: Date.now(), text: '2030-01-01 00:00:00' })
    // Tried again at the next scan (100 ms) or 5 s after the failure; the claim would hold it for 120 s.
    await waitFor(() => sends > 0, 30_000, 'the message sent')
    await waitFor(async () => (await store.forDevice('d1')).length === 0, 5_000, 'the item removed')
    assert.equal(sends, 1, 'sent once')
  } finally {
    await scheduler.close()
  }
})

test.run()
