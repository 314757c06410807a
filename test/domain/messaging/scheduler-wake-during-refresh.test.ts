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
import { waitFor } from '../../helpers/gateway.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { soloLiveness } from '../../helpers/solo-liveness.ts'

/**
 * A device that connects gets its items waiting for a retry at once (docs/decisions.md, Scheduler),
 * also when it connects again while the read of its items for the last connection is under way.
 */
const test = suite('scheduler: a connection while the last one is still reading the device items')

/** A storage whose listing of `prefix` stops after its first entry until `release()` while `hold` is on. */
function holdingListing(storage: Storage, prefix: string) {
  const state = { hold: false, held: false, release: () => {} }
  const view = new Proxy(storage, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (name !== 'list') return typeof value === 'function' ? value.bind(target) : value
      return async function* (p: string) {
        let first = true
        for await (const entry of target.list(p)) {
          yield entry
          if (first && p === prefix && state.hold) {
            state.hold = false
            state.held = true
            await new Promise<void>(resolve => (state.release = resolve))
          }
          first = false
        }
      }
    },
  })
  return { view, state }
}

test('two wakes of a device, the second while the first is reading its items: every item waiting for a retry goes at once', async () => {
  const device = { id: 'd1', accountId: 'a1', linked: true } as Device
  const devices = { get: async () => device, load: async () => device, status: async () => ({ connected: true, state: 'open' }) } as unknown as Devices
  const accounts = { get: async () => ({}), active: () => true } as never
  const listing = holdingListing(memoryStorage(), 'schedule:d1:')
  let failing = true
  const sent: string[] = []
  let tries = 0
  const messenger = {
    async perform(_device: Device, action: Action) {
      tries++
      if (failing) throw new TransportError('unreachable', 'network down')
      sent.push((action as { message: { text: string } }).message.text)
      return `m${sent.length}`
    },
  } as unknown as Messenger
  const scheduler = createScheduler(
    createScheduleStore(listing.view, new KeyedLock()),
    messenger,
    { devices, accounts, liveness: soloLiveness() },
    // A retry an hour later, a rescan a minute later: only the wake can send them within the test.
    { retryMs: [3_600_000], pollMs: 60_000, leaseMs: 2_000, maxWaitMs: 3_600_000 },
    silentLogger,
  )
  scheduler.start()
  const at = Date.now()
  for (const text of ['um', 'dois', 'tres'])
    await scheduler.schedule(device, { kind: 'send', to: '5511988880002', message: { kind: 'text', text } } as Action, { at, text })
  await waitFor(() => tries === 3, 10_000, 'a first, failed, attempt of each')
  failing = false
  // The device connects: its items are read; the read stops after the first one (a slow store). It connects again meanwhile.
  listing.state.hold = true
  scheduler.wake('d1')
  await waitFor(() => listing.state.held, 10_000, 'the first wake reading the items')
  scheduler.wake('d1')
  await new Promise(resolve => setTimeout(resolve, 50))
  listing.state.release()
  await waitFor(() => sent.length === 3, 10_000, `all three sent at once (sent: ${sent.join(', ')})`).catch(err => {
    throw new Error(`${err.message}; sent: [${sent.join(', ')}]`)
  })
  assert.deepEqual([...sent].sort(), ['dois', 'tres', 'um'])
  await scheduler.close()
})

test.run()
