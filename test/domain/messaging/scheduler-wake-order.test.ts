import assert from 'node:assert/strict'
import { suite } from 'uvu'
import type { Device, Devices } from '../../../src/domain/devices.ts'
import type { Action } from '../../../src/domain/messaging/actions.ts'
import type { Messenger } from '../../../src/domain/messaging/messenger.ts'
import { createScheduleStore } from '../../../src/domain/messaging/schedule-store.ts'
import { createScheduler } from '../../../src/domain/messaging/scheduler.ts'
import { TransportError } from '../../../src/ports/transport.ts'
import { silentLogger } from '../../../src/logger.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { soloLiveness } from '../../helpers/solo-liveness.ts'

/**
 * A device's items due at the same time go out in the order they were scheduled (docs/decisions.md,
 * Scheduler), also when the device connects while the first of them is being checked: its status
 * read found the device away, and the connection came before that item was parked.
 */
const test = suite('scheduler: a connection while the first due item of a device is checked keeps the order')

test('the device connects after the first item read its status (away): the items go out in the order they were scheduled', async () => {
  const device = { id: 'd1', accountId: 'a1', linked: true } as Device
  let connected = false
  const devices = {
    get: async () => device,
    load: async () => device,
    status: async () => ({ connected, state: connected ? 'open' : 'close' }),
  } as unknown as Devices
  let accountReads = 0
  // The connection (and its wake) arrives while the first item's run reads its account, after it read the device's status.
  const accounts = {
    get: async () => {
      if (++accountReads === 1) ((connected = true), scheduler.wake('d1'))
      return {}
    },
    active: () => true,
  } as never
  const sent: string[] = []
  const messenger = {
    async perform(_device: Device, action: Action) {
      sent.push((action as { message: { text: string } }).message.text)
      return `m${sent.length}`
    },
  } as unknown as Messenger
  const scheduler = createScheduler(
    createScheduleStore(memoryStorage(), new KeyedLock()),
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

test('the first item is refused (not connected) while the device connects again: the items go out in the order they were scheduled', async () => {
  const device = { id: 'd1', accountId: 'a1', linked: true } as Device
  const devices = {
    get: async () => device,
    load: async () => device,
    status: async () => ({ connected: true, state: 'open' }),
  } as unknown as Devices
  const accounts = { get: async () => ({}), active: () => true } as never
  const sent: string[] = []
  let refused = false
  const messenger = {
    async perform(_device: Device, action: Action) {
      const text = (action as { message: { text: string } }).message.text
      // The connection dropped as the first item went out, and came back (its wake) before the refusal reached the scheduler.
      if (!refused) throw ((refused = true), scheduler.wake('d1'), new TransportError('not-connected', 'the device is not connected'))
      sent.push(text)
      return `m${sent.length}`
    },
  } as unknown as Messenger
  const scheduler = createScheduler(
    createScheduleStore(memoryStorage(), new KeyedLock()),
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
