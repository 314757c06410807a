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

/**
 * A device's items due at the same time go out in the order they were scheduled (docs/decisions.md,
 * Scheduler), also when the device connects while they are being put to wait for it one by one: the
 * first ones already wait (parked), a later one is being checked, the rest are in the device's line.
 */
const test = suite('scheduler: a connection while the due items of an away device are being parked keeps the order')

test('the device connects while its second item is read (the first already parked): the items go out in the order they were scheduled', async () => {
  const device = { id: 'd1', accountId: 'a1', linked: true } as Device
  let connected = false
  const devices = {
    get: async () => device,
    load: async () => device,
    status: async () => ({ connected, state: connected ? 'open' : 'close' }),
  } as unknown as Devices
  const accounts = { get: async () => ({}), active: () => true } as never
  const sent: string[] = []
  const messenger = {
    async perform(_device: Device, action: Action) {
      sent.push((action as { message: { text: string } }).message.text)
      return `m${sent.length}`
    },
  } as unknown as Messenger
  const store = createScheduleStore(memoryStorage(), new KeyedLock())
  // The connection (and its wake) arrives while the second item's run reads it from the store, the first one already parked.
  const read = store.get
  let woke = false
  store.get = async key => {
    const item = await read(key)
    if (!woke && item?.summary.includes('dois')) ((woke = true), (connected = true), scheduler.wake('d1'))
    return item
  }
  const scheduler = createScheduler(
    store,
    messenger,
    { devices, accounts, liveness: soloLiveness() },
    { retryMs: [], pollMs: 60_000, leaseMs: 2_000, maxWaitMs: 3_600_000 },
    silentLogger,
  )
  const at = Date.now() + 300
  for (const text of ['um', 'dois', 'tres', 'quatro']) {
    await new Promise(resolve => setTimeout(resolve, 3)) // scheduled one after the other (each its own millisecond)
    await scheduler.schedule(device, { kind: 'send', to: '5511988880002', message: { kind: 'text', text } } as Action, { at, text })
  }
  scheduler.start()
  await waitFor(() => sent.length === 4, 10_000, 'the four items to be sent').catch(err => {
    throw new Error(`${err.message}; sent: [${sent.join(', ')}]`)
  })
  assert.deepEqual(sent, ['um', 'dois', 'tres', 'quatro'])
  await scheduler.close()
})

test.run()
