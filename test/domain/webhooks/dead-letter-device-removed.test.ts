import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { WebhookOutbox } from '../../../src/domain/webhooks/outbox.ts'
import type { Device, Devices } from '../../../src/domain/devices.ts'
import { GatewayEvents } from '../../../src/events.ts'
import { silentLogger } from '../../../src/logger.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { device, message, recordingSender, settings } from '../../helpers/outbox.ts'
import { pausingStore } from '../../helpers/pausing-storage.ts'
import { soloLiveness } from '../../helpers/solo-liveness.ts'

const test = suite('WebhookOutbox: a device deleted while one of its events is being dead-lettered')

test('the letter written as the device was deleted is deleted with it (not kept 30 days)', async () => {
  const store = pausingStore()
  // Device d1, marked `removing` once its deletion begins (as Devices.remove does before its hooks), gone at its end.
  let stored: Device | undefined = device('d1')
  const devices = {
    get: async (id: string) => (id === 'd1' ? stored : undefined),
    load: async (id: string) => (id === 'd1' ? stored : undefined),
    peek: (id: string) => (id === 'd1' ? stored : undefined),
    update: async () => stored,
  } as unknown as Devices
  const outbox = new WebhookOutbox({
    storage: store.storage,
    lock: new KeyedLock(),
    devices,
    sender: recordingSender(() => 500),
    events: new GatewayEvents(),
    logger: silentLogger,
    settings: settings({ maxAgeMs: 50, retryMs: [10] }),
    liveness: soloLiveness(),
  })
  await outbox.start()
  // Its attempt finds the event too old: the letter's write is held, the record read already.
  const letterWrite = store.pause('set', 'webhook-dead:')
  await outbox.record(device('d1'), message('late'))
  await letterWrite.reached
  // The device is deleted meanwhile: its pending events and dead letters go (the letter is not written yet).
  stored = { ...device('d1'), removing: true }
  await outbox.removeDevice(stored)
  stored = undefined
  letterWrite.release()
  await waitFor(async () => (await store.keys('webhook-outbox:')).length === 0, 5_000, 'the record to go')
  await new Promise(resolve => setTimeout(resolve, 50))
  assert.equal(await store.keys('webhook-dead:'), [], "a deleted device's dead letter is kept")
  await outbox.close()
})

test.run()
