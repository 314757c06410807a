import assert from 'node:assert/strict'
import { suite } from 'uvu'
import type { Device, Devices } from '../../../src/domain/devices.ts'
import type { Action } from '../../../src/domain/messaging/actions.ts'
import type { Messenger } from '../../../src/domain/messaging/messenger.ts'
import { createScheduleStore } from '../../../src/domain/messaging/schedule-store.ts'
import { createScheduler } from '../../../src/domain/messaging/scheduler.ts'
import { silentLogger } from '../../../src/logger.ts'
import { TransportError } from '../../../src/ports/transport.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { StorageUnavailableError } from '../../../src/store/guarded-storage.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { soloLiveness } from '../../helpers/solo-liveness.ts'

/**
 * A device's scheduled items wait for it while it is away (up to `maxWaitMs`, a connection wakes
 * them), and that wait never parks them while it is connected, nor retries one without end.
 */
const test = suite('scheduler: items waiting for their device')

const device = { id: 'd1', accountId: 'a1', linked: true } as Device
const textTo = (to: string, text: string): Action => ({ kind: 'send', to, message: { kind: 'text', text } }) as Action
const accounts = { get: async () => ({}), active: () => true } as never

/** A scheduler over a fresh memory store: `status` says whether the device is connected, `perform` sends (or throws). */
function schedulerWith(
  perform: (action: Action) => Promise<string>,
  status: () => boolean,
  timing: { pollMs: number; maxWaitMs: number },
  load: () => Promise<Device> = async () => device,
) {
  const store = createScheduleStore(memoryStorage(), new KeyedLock())
  const devices = { get: async () => device, load, status: async () => ({ connected: status(), state: status() ? 'open' : 'close' }) } as unknown as Devices
  const messenger = { perform: (_device: Device, action: Action) => perform(action) } as unknown as Messenger
  const scheduler = createScheduler(
    store,
    messenger,
    { devices, accounts, liveness: soloLiveness() },
    { retryMs: [50, 50, 50], leaseMs: 2_000, ...timing },
    silentLogger,
  )
  scheduler.start()
  return { scheduler, store }
}

test('a device that reconnects while a send of it fails as not connected is not parked: its items go within seconds, not at the end of the wait', async () => {
  let connected = true
  let calls = 0
  const sent: { text: string; at: number }[] = []
  const { scheduler } = schedulerWith(
    async action => {
      if (++calls === 1) {
        // The session drops while this send is on its way, and is back (the connection's wake) before its error reaches the scheduler.
        connected = false
        await new Promise(resolve => setTimeout(resolve, 50))
        connected = true
        scheduler.wake('d1')
        await new Promise(resolve => setTimeout(resolve, 50))
        throw new TransportError('not-connected', 'socket closed')
      }
      sent.push({ text: (action as { message: { text: string } }).message.text, at: Date.now() })
      return `m${calls}`
    },
    () => connected,
    { pollMs: 100, maxWaitMs: 60_000 },
  )
  const start = Date.now()
  await scheduler.schedule(device, textTo('5511988880002', 'primeiro'), { at: start + 100, text: 'x' })
  await scheduler.schedule(device, textTo('5511988880003', 'segundo'), { at: start + 500, text: 'y' })
  await waitFor(() => sent.length === 2, 5_000, 'both items sent (they waited for the 60 s wait before)')
  assert.deepEqual(
    sent.map(s => s.text),
    ['primeiro', 'segundo'],
  )
  await scheduler.close()
})

test('a device that says it is connected but refuses every send: once the wait is over each try is an attempt, and the item fails after its retries (no endless loop)', async () => {
  let calls = 0
  const { scheduler, store } = schedulerWith(
    async () => {
      calls++
      throw new TransportError('not-connected', 'no session')
    },
    () => true,
    { pollMs: 1_000, maxWaitMs: 300 },
  )
  await scheduler.schedule(device, textTo('5511988880002', 'oi'), { at: Date.now(), text: 'x' })
  await waitFor(async () => (await store.forDevice('d1'))[0]?.state === 'failed', 5_000, 'the item failed')
  const [item] = await store.forDevice('d1')
  assert.equal(item!.attempts, 4, 'the first try and its three retries')
  await new Promise(resolve => setTimeout(resolve, 300))
  assert.ok(calls < 20, `${calls} tries (it looped before, hundreds a second)`)
  await scheduler.close()
})

test('a schedule whose device check the store could not answer is stored and answered, not refused: a client told to try again would have it sent twice', async () => {
  let loads = 0
  const sent: string[] = []
  const { scheduler } = schedulerWith(
    async action => (sent.push((action as { message: { text: string } }).message.text), `m${sent.length}`),
    () => true,
    { pollMs: 100, maxWaitMs: 60_000 },
    async () => {
      if (++loads === 1) throw new StorageUnavailableError('get', { cause: new Error('timed out') })
      return device
    },
  )
  const item = await scheduler.schedule(device, textTo('5511988880002', 'lembrete'), { at: Date.now() + 100, text: 'x' })
  assert.equal(item.state, 'pending')
  await waitFor(() => sent.length === 1, 5_000, 'the item sent')
  await new Promise(resolve => setTimeout(resolve, 300))
  assert.deepEqual(sent, ['lembrete'])
  await scheduler.close()
})

test.run()
