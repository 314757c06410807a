import assert from 'node:assert/strict'
import { suite } from 'uvu'
import type { Device, Devices } from '../../../src/domain/devices.ts'
import type { Action } from '../../../src/domain/messaging/actions.ts'
import type { Messenger } from '../../../src/domain/messaging/messenger.ts'
import { TransportError } from '../../../src/ports/transport.ts'
import { ORDER, orderDevice, recordingMessenger, scheduledOrder } from '../../helpers/scheduled-order.ts'

/**
 * A device's items due at the same time go out in the order they were scheduled (docs/decisions.md,
 * Scheduler), also when the device connects while the first of them is being checked: its status
 * read found the device away, and the connection came before that item was parked.
 */
const test = suite('scheduler: a connection while the first due item of a device is checked keeps the order')

test('the device connects after the first item read its status (away): the items go out in the order they were scheduled', async () => {
  let connected = false
  let accountReads = 0
  const order = await scheduledOrder(({ wake, sent }) => ({
    devices: {
      get: async () => orderDevice,
      load: async () => orderDevice,
      status: async () => ({ connected, state: connected ? 'open' : 'close' }),
    } as unknown as Devices,
    // The connection (and its wake) arrives while the first item's run reads its account, after it read the device's status.
    accounts: {
      get: async () => {
        if (++accountReads === 1) ((connected = true), wake())
        return {}
      },
      active: () => true,
    },
    messenger: recordingMessenger(sent),
  }))
  assert.deepEqual(order, ORDER)
})

test('the first item is refused (not connected) while the device connects again: the items go out in the order they were scheduled', async () => {
  let refused = false
  const order = await scheduledOrder(({ wake, sent }) => ({
    devices: {
      get: async () => orderDevice,
      load: async () => orderDevice,
      status: async () => ({ connected: true, state: 'open' }),
    } as unknown as Devices,
    accounts: { get: async () => ({}), active: () => true },
    messenger: {
      async perform(device: Device, action: Action) {
        // The connection dropped as the first item went out, and came back (its wake) before the refusal reached the scheduler.
        if (!refused) throw ((refused = true), wake(), new TransportError('not-connected', 'the device is not connected'))
        return recordingMessenger(sent).perform(device, action)
      },
    } as unknown as Messenger,
  }))
  assert.deepEqual(order, ORDER)
})

test.run()
