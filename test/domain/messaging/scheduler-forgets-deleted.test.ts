import assert from 'node:assert/strict'
import { suite } from 'uvu'
import type { Device, Devices } from '../../../src/domain/devices.ts'
import type { Action } from '../../../src/domain/messaging/actions.ts'
import type { Messenger } from '../../../src/domain/messaging/messenger.ts'
import { createScheduleStore } from '../../../src/domain/messaging/schedule-store.ts'
import { createScheduler } from '../../../src/domain/messaging/scheduler.ts'
import { silentLogger } from '../../../src/logger.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { soloLiveness } from '../../helpers/solo-liveness.ts'

/** Every per-device structure is cleaned when its device is deleted (docs/limits.md): the scheduler's waits for away devices too. */
const test = suite('scheduler: nothing kept of deleted devices')

const accounts = { get: async () => ({}), active: () => true } as never

test('200 devices deleted while their scheduled items waited for them (not connected): the scheduler remembers none of them', async () => {
  const devices = new Map(Array.from({ length: 200 }, (_, i) => [`d${i}`, { id: `d${i}`, accountId: 'a1', linked: true } as Device]))
  const found = {
    get: async (id: string) => devices.get(id),
    load: async (id: string) => devices.get(id),
    status: async () => ({ connected: false, state: 'closed' }),
  } as unknown as Devices
  const messenger = { perform: async () => 'never' } as unknown as Messenger
  const store = createScheduleStore(memoryStorage(), new KeyedLock())
  const scheduler = createScheduler(
    store,
    messenger,
    { devices: found, accounts, liveness: soloLiveness() },
    { retryMs: [50], leaseMs: 2_000, pollMs: 100, maxWaitMs: 3_600_000 },
    silentLogger,
  )
  scheduler.start()
  const action = { kind: 'send', to: '5511988880002', message: { kind: 'text', text: 'oi' } } as Action
  for (const device of devices.values()) await scheduler.schedule(device, action, { at: Date.now(), text: 'agora' })
  await waitFor(() => scheduler.devicesRemembered === 200, 10_000, 'every item waiting for its device')
  for (const device of [...devices.values()]) {
    devices.delete(device.id)
    await scheduler.removeDevice(device)
  }
  assert.equal(scheduler.devicesRemembered, 0, 'a deleted device leaves nothing in the scheduler')
  await scheduler.close()
})

test.run()
