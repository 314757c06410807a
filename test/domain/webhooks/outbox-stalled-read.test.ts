import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { WebhookOutbox } from '../../../src/domain/webhooks/outbox.ts'
import { createOutboxStore, outboxKey } from '../../../src/domain/webhooks/outbox-store.ts'
import type { Device, Devices } from '../../../src/domain/devices.ts'
import type { Liveness } from '../../../src/domain/instances.ts'
import { GatewayEvents } from '../../../src/events.ts'
import { silentLogger } from '../../../src/logger.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { device, lateRecord, settings } from '../../helpers/outbox.ts'

/** An attempt that stalls between its claim and its burial (no POST): it buries the event only while it still holds that claim. */
const test = suite('WebhookOutbox: a burial after a stalled read')

const liveness = (id: string, alive: Set<string>): Liveness => ({ id, isAlive: other => other !== undefined && alive.has(other), onDeparture() {} })

const cases = [
  { name: 'its device read answers no webhook URL (the host sets one since)', url: undefined, age: 0 },
  { name: 'its event is past the maximum age (buried and redriven fresh since)', url: 'https://receiver.example/d1', age: 60_000 },
]

for (const { name, url, age } of cases) {
  test(`an attempt that stalls after its claim, ${name}, leaves the event another process took over since`, async () => {
    const shared = memoryStorage()
    const alive = new Set(['A', 'B'])
    const record = { ...lateRecord('m1', 'A'), createdAt: Date.now() - age - 1 }
    const key = outboxKey('d1', record.id)
    await shared.set(`webhook-outbox:${key}`, record)
    // A's read of the device is answered (as the device was then), and A stalls before it goes on.
    let reading = false
    let resume!: () => void
    const resumed = new Promise<void>(resolve => (resume = resolve))
    const seen: Device = { ...device('d1'), webhookUrl: url }
    const devicesOfA = { get: async () => ((reading = true), await resumed, seen), peek: () => seen, update: async () => seen } as unknown as Devices
    const a = new WebhookOutbox({
      ...{ storage: shared.connectAgain(), lock: new KeyedLock(), devices: devicesOfA, sender: { send: async () => ({ status: 200 }) } },
      ...{ events: new GatewayEvents(), logger: silentLogger, settings: settings({ maxAgeMs: 60_000 }), liveness: liveness('A', alive) },
    })
    await a.start()
    await waitFor(() => reading, 5_000, "A's claim and device read")
    // B judges A gone and adopts the event; too old, B buries it and the host redrives it; then B claims it for its attempt.
    alive.delete('A')
    const b = createOutboxStore(shared.connectAgain(), new KeyedLock())
    assert.ok(await b.adopt(key, liveness('B', alive)), 'B adopted it')
    if (age > 0) {
      assert.ok(await b.deadLetter(key, 'max-age', Date.now()), 'B buried it')
      assert.ok(await b.redrive(record.id, Date.now(), 'B'), 'the host redrove it')
    }
    const claimed = await b.claim(key, liveness('B', alive), Date.now(), 35_000)
    assert.type(claimed, 'object', "B's claim")
    resume()
    await a.close()
    assert.equal(await b.get(key), claimed, "the event pending as B's claim left it")
    assert.equal(await b.deadLetters(), [], 'no dead letter: A buries only the event it still holds the claim of')
  })
}

test.run()
