import assert from 'node:assert/strict'
import { suite } from 'uvu'
import type { Device, Devices } from '../../../src/domain/devices.ts'
import type { Action } from '../../../src/domain/messaging/actions.ts'
import type { Messenger } from '../../../src/domain/messaging/messenger.ts'
import { createScheduleStore } from '../../../src/domain/messaging/schedule-store.ts'
import { createScheduler } from '../../../src/domain/messaging/scheduler.ts'
import { silentLogger } from '../../../src/logger.ts'
import type { Storage } from '../../../src/ports/storage.ts'
import { StorageUnavailableError } from '../../../src/store/guarded-storage.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { soloLiveness } from '../../helpers/solo-liveness.ts'

/**
 * Right before a scheduled send reaches the network, the scheduler reads the item to check its claim
 * is still held. When that read fails (the store away), nothing reached the network: not an attempt.
 * The item is released and tried again, its retries untouched. Before, the failure was counted as an
 * attempt (with no retry left, the item was failed for good, never sent).
 */
const test = suite('scheduler: a claim check the store could not answer')

/** `storage` whose next read of a scheduled item rejects as a hung store's does, once `state.armed` is set. */
function failingRead(storage: Storage, state: { armed: boolean }): Storage {
  return new Proxy(storage, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (typeof value !== 'function') return value
      if (name !== 'get') return value.bind(target)
      return async (key: string, ...rest: unknown[]) => {
        if (state.armed && key.startsWith('schedule:')) {
          state.armed = false
          throw new StorageUnavailableError('get', { cause: new Error('timed out') })
        }
        return value.call(target, key, ...rest)
      }
    },
  })
}

test('the claim check right before the send fails: not an attempt, the item is sent on a later try', async () => {
  const state = { armed: false }
  const store = createScheduleStore(failingRead(memoryStorage(), state), new KeyedLock())
  const device = { id: 'd1', accountId: 'a1', linked: true } as Device
  const devices = { get: async () => device, load: async () => device, status: async () => ({ connected: true, state: 'open' }) } as unknown as Devices
  const accounts = { get: async () => ({}), active: () => true } as never
  let [checks, sends] = [0, 0]
  // As the messenger does: `before` runs right before the network call, and its rejection prevents it (the caller gets it).
  const messenger = {
    perform: async (_device: Device, _action: Action, { before }: { before: () => Promise<void> }) => {
      if (++checks === 1) state.armed = true // the first check's read of the item fails
      await before()
      return `m${++sends}`
    },
  } as unknown as Messenger
  // No retry: an attempt counted fails the item for good.
  const timing = { retryMs: [], pollMs: 100, leaseMs: 120_000, maxWaitMs: 600_000 }
  const scheduler = createScheduler(store, messenger, { devices, accounts, liveness: soloLiveness() }, timing, silentLogger)
  const action: Action = { kind: 'send', to: '5511988880002', message: { kind: 'text', text: 'oi' } }
  try {
    scheduler.start()
    await scheduler.schedule(device, action, { at: Date.now(), text: '2030-01-01 00:00:00' })
    await waitFor(() => checks > 0, 5_000, 'the claim checked')
    assert.equal(state.armed, false, 'the check read the item')
    await waitFor(() => sends > 0, 10_000, 'the message sent on a later try')
    await waitFor(async () => (await store.forDevice('d1')).length === 0, 5_000, 'the item removed')
    assert.equal(sends, 1, 'sent once')
  } finally {
    await scheduler.close()
  }
})

test.run()
