import assert from 'node:assert/strict'
import { suite } from 'uvu'
import type { Devices } from '../../../src/domain/devices.ts'
import { ORDER, orderDevice, recordingMessenger, scheduledOrder } from '../../helpers/scheduled-order.ts'

/**
 * A device's items due at the same time go out in the order they were scheduled (docs/decisions.md,
 * Scheduler), also when the device connects while they are being put to wait for it one by one: the
 * first ones already wait (parked), a later one is being checked, the rest are in the device's line.
 */
const test = suite('scheduler: a connection while the due items of an away device are being parked keeps the order')

test('the device connects while its second item is read (the first already parked): the items go out in the order they were scheduled', async () => {
  let connected = false
  const order = await scheduledOrder(({ wake, sent, newStore }) => {
    const store = newStore()
    // The connection (and its wake) arrives while the second item's run reads it from the store, the first one already parked.
    const read = store.get
    let woke = false
    store.get = async key => {
      const item = await read(key)
      if (!woke && item?.summary.includes('dois')) ((woke = true), (connected = true), wake())
      return item
    }
    return {
      devices: {
        get: async () => orderDevice,
        load: async () => orderDevice,
        status: async () => ({ connected, state: connected ? 'open' : 'close' }),
      } as unknown as Devices,
      accounts: { get: async () => ({}), active: () => true },
      messenger: recordingMessenger(sent),
      store,
    }
  })
  assert.deepEqual(order, ORDER)
})

test.run()
