import assert from 'node:assert/strict'
import { suite } from 'uvu'
import type { Device, Devices } from '../../../src/domain/devices.ts'
import type { Action } from '../../../src/domain/messaging/actions.ts'
import type { Messenger } from '../../../src/domain/messaging/messenger.ts'
import { createScheduleStore } from '../../../src/domain/messaging/schedule-store.ts'
import { createScheduler } from '../../../src/domain/messaging/scheduler.ts'
import { silentLogger } from '../../../src/logger.ts'
import type { Storage } from '../../../src/ports/storage.ts'
import { TransportError } from '../../../src/ports/transport.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { StorageUnavailableError } from '../../../src/store/guarded-storage.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { soloLiveness } from '../../helpers/solo-liveness.ts'

/**
 * A scheduled send that timed out on the network may have been delivered, so it is never sent again
 * (docs/decisions.md, "Scheduler"): the store refusing the record of that failure once (a hung store
 * answers StorageUnavailableError) must not put the item back in line once its claim runs out; the
 * record is tried again instead. Same for a failure to retry: the attempt is counted once.
 */
const test = suite('scheduler: a failed send whose record the store refused is not sent again')

/** A storage whose writes to scheduled items fail as a hung store's do while `refusing()` says so. */
function refusingWrites(storage: Storage, refusing: () => boolean): Storage {
  return new Proxy(storage, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (typeof value !== 'function') return value
      if (!['set', 'compareAndSet', 'delete', 'deleteIfEqual'].includes(name as string)) return value.bind(target)
      return async (key: string, ...rest: unknown[]) => {
        if (key.startsWith('schedule:') && refusing()) throw new StorageUnavailableError(String(name), { cause: new Error('timed out') })
        return value.call(target, key, ...rest)
      }
    },
  })
}

function setup(error: Error) {
  let [sends, refusals] = [0, 0]
  const store = createScheduleStore(
    refusingWrites(memoryStorage(), () => sends === 1 && refusals++ < 1),
    new KeyedLock(),
  )
  const device = { id: 'd1', accountId: 'a1', linked: true } as Device
  const devices = { get: async () => device, load: async () => device, status: async () => ({ connected: true, state: 'open' }) } as unknown as Devices
  const accounts = { get: async () => ({}), active: () => true } as never
  const messenger = {
    perform: async () => {
      if (++sends === 1) throw error
      return `m${sends}`
    },
  } as unknown as Messenger
  const timing = { retryMs: [60_000], pollMs: 100, leaseMs: 300, maxWaitMs: 60_000 }
  const scheduler = createScheduler(store, messenger, { devices, accounts, liveness: soloLiveness() }, timing, silentLogger)
  const action: Action = { kind: 'send', to: '5511988880002', message: { kind: 'text', text: 'oi' } }
  return { store, scheduler, sends: () => sends, schedule: () => scheduler.schedule(device, action, { at: Date.now(), text: '2030-01-01 00:00:00' }) }
}

test('a send timed out on the network, its failure refused once by the store: failed for good, never sent again', async () => {
  const { store, scheduler, sends, schedule } = setup(new TransportError('timeout', 'it may or may not have reached WhatsApp'))
  try {
    scheduler.start()
    await schedule()
    await waitFor(async () => sends() > 1 || (await store.forDevice('d1'))[0]?.state === 'failed', 8_000, 'the item failed')
    await new Promise(resolve => setTimeout(resolve, 1_000)) // past the claim (300 ms) and the rescans (100 ms)
    assert.equal(sends(), 1, 'sent once')
    assert.equal((await store.forDevice('d1'))[0].attempts, 1)
  } finally {
    await scheduler.close()
  }
})

test('a send failed for a retry, its record refused once by the store: waits for its retry, the attempt counted', async () => {
  const { store, scheduler, sends, schedule } = setup(new TransportError('failed', 'boom'))
  try {
    scheduler.start()
    await schedule()
    await waitFor(async () => sends() > 1 || (await store.forDevice('d1'))[0]?.attempts === 1, 8_000, 'the attempt recorded')
    await new Promise(resolve => setTimeout(resolve, 1_000))
    assert.equal(sends(), 1, 'not sent before its retry (60 s)')
  } finally {
    await scheduler.close()
  }
})

test.run()
