import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { Webhook } from 'standardwebhooks'
import { WebhookOutbox } from '../../../src/domain/webhooks/outbox.ts'
import { outboxKey, type OutboxRecord } from '../../../src/domain/webhooks/outbox-store.ts'
import type { WebhookDelivery, WebhookSender } from '../../../src/ports/webhooks.ts'
import { soloLiveness } from '../../helpers/solo-liveness.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { waitFor } from '../../helpers/gateway.ts'

const test = suite('WebhookOutbox over a Storage: bounded timetable, restarts, leases')

import { SECRET, changingDevice, device, recordingSender, outbox, message, texts, settings, lateRecord } from '../../helpers/outbox.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { GatewayEvents } from '../../../src/events.ts'
import { silentLogger } from '../../../src/logger.ts'

test('with a timetable of 5 entries, 200 events of 3 devices are all delivered, never more than 5 held in memory', async () => {
  let box!: WebhookOutbox
  let mostHeld = 0
  const sender = recordingSender(() => {
    const loop = (box as any).loop
    mostHeld = Math.max(mostHeld, loop.timetable.size)
    return 200
  })
  box = outbox(memoryStorage(), sender)
  await box.start()
  for (let i = 0; i < 200; i++) await box.record(device(`d${i % 3}`), message(`m${i}`))
  await waitFor(() => new Set(texts(sender)).size === 200, 10_000, 'all 200 deliveries')
  assert.ok(mostHeld <= 5, `held ${mostHeld}`)
  for (const delivery of sender.sent) new Webhook(SECRET).verify(delivery.body, delivery.headers)
  await waitFor(async () => (await box.pending()) === 0)
  await box.close()
})

test('a stuck device with a backlog larger than memory holds up no other device, and drains once unstuck', async () => {
  let release!: () => void
  const unstuck = new Promise<void>(resolve => (release = resolve))
  let inFlight = 0
  let mostInFlight = 0
  let mostHeld = 0
  let box!: WebhookOutbox
  const sent: WebhookDelivery[] = []
  const sender: WebhookSender = {
    async send(delivery) {
      sent.push(delivery)
      const loop = (box as any).loop
      mostHeld = Math.max(mostHeld, loop.timetable.size, loop.lines.get('d1')?.length ?? 0)
      if (!delivery.url.endsWith('/d1')) return { status: 200 }
      mostInFlight = Math.max(mostInFlight, ++inFlight)
      await unstuck
      inFlight--
      return { status: 200 }
    },
  }
  box = outbox(memoryStorage(), sender, { capacity: 5, lineLimit: 4, concurrencyPerLane: 1 })
  await box.start()
  for (let i = 0; i < 30; i++) await box.record(device('d1'), message(`stuck${i}`))
  for (let i = 0; i < 3; i++) await box.record(device('d2'), message(`free${i}`))
  await waitFor(() => texts({ sent }).filter(t => t.startsWith('free')).length === 3, 5_000, "the other device's events")
  assert.is(texts({ sent }).filter(t => t.startsWith('stuck')).length, 1, 'the stuck device is still on its first event')
  release()
  await waitFor(() => new Set(texts({ sent })).size === 33, 10_000, 'the backlog to drain')
  assert.is(mostInFlight, 1)
  assert.ok(mostHeld <= 5, `held ${mostHeld} in memory`)
  await waitFor(async () => (await box.pending()) === 0)
  await box.close()
})

test('a new event is delivered at once even when the timetable is full of far-future retries', async () => {
  const storage = memoryStorage()
  const now = Date.now()
  for (let i = 0; i < 20; i++) {
    const record: OutboxRecord = {
      id: `msg_late${i}`,
      deviceId: 'd1',
      accountId: 'acc',
      event: 'Texto',
      body: JSON.stringify({ text: `late${i}` }),
      createdAt: now,
      dueAt: now + 3_600_000,
      attempts: 1,
    }
    await storage.set(`webhook-outbox:${outboxKey('d1', record.id)}`, record)
  }
  const sender = recordingSender()
  const box = outbox(storage, sender)
  await box.start()
  await box.record(device('d2'), message('fresh'))
  await waitFor(() => sender.sent.length === 1, 5_000, 'the fresh event')
  assert.equal(texts(sender), ['fresh'])
  assert.is(await box.pending(), 20)
  await box.close()
})

test('events recorded before a close are delivered by the next outbox on the same storage, with the same webhook-id', async () => {
  const storage = memoryStorage()
  const failing = recordingSender(() => 503)
  const first = outbox(storage, failing)
  await first.start()
  for (const id of ['a', 'b', 'c']) await first.record(device('d1'), message(id))
  await waitFor(() => failing.sent.length >= 3, 5_000, 'first attempts')
  await first.close()

  const sender = recordingSender()
  const second = outbox(storage, sender)
  await second.start()
  await waitFor(() => sender.sent.length === 3, 5_000, 'the deliveries after the restart')
  assert.equal(texts(sender).sort(), ['a', 'b', 'c'])
  const idsBefore = new Set(failing.sent.map(d => d.headers['webhook-id']))
  for (const delivery of sender.sent) assert.ok(idsBefore.has(delivery.headers['webhook-id']))
  await second.close()
})

test('a record claimed by another live instance is left alone until its lease expires', async () => {
  const storage = memoryStorage()
  const until = Date.now() + 400
  const record: OutboxRecord = {
    id: 'msg_leased',
    deviceId: 'd1',
    accountId: 'acc',
    event: 'Texto',
    body: JSON.stringify({ text: 'leased' }),
    createdAt: Date.now(),
    dueAt: Date.now(),
    attempts: 0,
    owner: 'another-instance',
    lease: { owner: 'another-instance', until },
  }
  await storage.set(`webhook-outbox:${outboxKey('d1', record.id)}`, record)
  const sender = recordingSender()
  // The other instance is alive, then goes (its record stops being renewed).
  const departures: ((gone: string[]) => void)[] = []
  let otherAlive = true
  const liveness = {
    id: 'me',
    isAlive: (id: string | undefined) => id === 'me' || (otherAlive && id === 'another-instance'),
    onDeparture: (listener: (gone: string[]) => void) => void departures.push(listener),
  }
  const box = outbox(storage, sender, {}, liveness)
  await box.start()
  await new Promise(resolve => setTimeout(resolve, 600))
  assert.is(sender.sent.length, 0, 'a live instance owns it: left alone, even past its lease')
  otherAlive = false
  for (const listener of departures) listener(['another-instance'])
  await waitFor(() => sender.sent.length === 1, 5_000, 'the delivery once its owner is gone')
  assert.ok(Date.now() >= until, 'not delivered before the lease expired')
  assert.is(await storage.get<OutboxRecord>(`webhook-outbox:${outboxKey('d1', record.id)}`), undefined, 'delivered and forgotten')
  await box.close()
})

test('a claim left by a gone instance is taken over at once, whatever its lease says', async () => {
  const storage = memoryStorage()
  const record: OutboxRecord = {
    id: 'msg_orphan',
    deviceId: 'd1',
    accountId: 'acc',
    event: 'Texto',
    body: JSON.stringify({ text: 'orphan' }),
    createdAt: Date.now(),
    dueAt: Date.now(),
    attempts: 0,
    owner: 'gone-instance',
    lease: { owner: 'gone-instance', until: Date.now() + 600_000 },
  }
  await storage.set(`webhook-outbox:${outboxKey('d1', record.id)}`, record)
  const sender = recordingSender()
  const box = outbox(storage, sender)
  await box.start()
  await waitFor(() => sender.sent.length === 1, 10_000, 'the orphaned delivery (its lease runs for 10 more minutes)')
  await box.close()
})

test('an event of a device that no longer exists is dropped, not sent', async () => {
  const sender = recordingSender()
  const storage = memoryStorage()
  const box = outbox(storage, sender)
  await box.start()
  await box.record(device('gone-device'), message('orphan'))
  await waitFor(async () => (await box.pending()) === 0, 5_000, 'the record to be dropped')
  assert.is(sender.sent.length, 0)
  await box.close()
})

test('an event found already pending and owned by this instance is delivered: its own write whose answer was lost', async () => {
  const storage = memoryStorage()
  const liveness = soloLiveness('me')
  const sender = recordingSender()
  const box = outbox(storage, sender, {}, liveness)
  await box.start()
  // The first write timed out for the caller but landed: the record is there, nobody scheduled it.
  const record = lateRecord('late', 'me')
  await storage.set(`webhook-outbox:${outboxKey('d1', record.id)}`, record)
  // The retry of that write finds it "already pending".
  await box.record(device('d1'), message('late'))
  await waitFor(() => sender.sent.length === 1, 5_000, 'the delivery of the already-pending event')
  assert.is(sender.sent[0]!.headers['webhook-id'], record.id)
  await waitFor(async () => (await box.pending()) === 0, 5_000, 'the record to be forgotten')
  await new Promise(resolve => setTimeout(resolve, 100))
  assert.is(sender.sent.length, 1, 'once')
  await box.close()
})

test('an event already pending and owned by another live instance is left to it', async () => {
  const storage = memoryStorage()
  const liveness = { id: 'me', isAlive: (id: string | undefined) => id === 'me' || id === 'other', onDeparture() {} }
  const sender = recordingSender()
  const box = outbox(storage, sender, {}, liveness)
  await box.start()
  const record = lateRecord('theirs', 'other')
  await storage.set(`webhook-outbox:${outboxKey('d1', record.id)}`, record)
  await box.record(device('d1'), message('theirs'))
  await new Promise(resolve => setTimeout(resolve, 300))
  assert.is(sender.sent.length, 0)
  assert.is(await box.pending(), 1)
  await box.close()
})

test("a record that appears behind its owner's back (a late write landing after its retry) is delivered by the next rescan", async () => {
  const storage = memoryStorage()
  const sender = recordingSender()
  const box = outbox(storage, sender, { reconcileMs: 100 }, soloLiveness('me'))
  await box.start()
  const record = lateRecord('behind', 'me')
  await storage.set(`webhook-outbox:${outboxKey('d1', record.id)}`, record)
  await waitFor(() => sender.sent.length === 1, 5_000, 'the rescan to deliver it')
  assert.is(sender.sent[0]!.headers['webhook-id'], record.id)
  await box.close()
})

test('a 410 from the old receiver after the webhook URL was changed leaves the events meant for the new URL pending', async () => {
  const { devices, current, set } = changingDevice()
  let release!: () => void
  const retired = new Promise<void>(resolve => (release = resolve))
  const sent: WebhookDelivery[] = []
  const sender: WebhookSender = {
    async send(delivery) {
      sent.push(delivery)
      if (delivery.url !== 'https://receiver.example/d1') return { status: 200 }
      await retired
      return { status: 410 } // the old receiver is retired
    },
  }
  const box = new WebhookOutbox({
    ...{ storage: memoryStorage(), lock: new KeyedLock(), devices, sender, events: new GatewayEvents(), logger: silentLogger },
    ...{ settings: settings({ concurrencyPerLane: 1 }), liveness: soloLiveness() },
  })
  await box.start()
  await box.record(current(), message('to-old'))
  await waitFor(() => sent.length === 1, 5_000, 'the attempt to the old URL')
  set({ ...current(), webhookUrl: 'https://new.example/hook' }) // operation 3 sets a new URL meanwhile
  await box.record(current(), message('to-new'))
  release()
  await waitFor(() => sent.some(d => d.url === 'https://new.example/hook'), 3_000, 'the new event delivered to the new URL')
  assert.equal(
    (await box.deadLetters()).map(letter => JSON.parse(letter.body).text),
    ['to-old'],
  )
  assert.is(current().webhookUrl, 'https://new.example/hook', 'the new URL is kept')
  await box.close()
})

test("a 410 dead-letters as gone the device's other events this process was attempting meanwhile, not as no-webhook", async () => {
  const { devices, current } = changingDevice()
  const sent: WebhookDelivery[] = []
  const sender: WebhookSender = {
    async send(delivery) {
      sent.push(delivery)
      if (JSON.parse(delivery.body).text === 'first') return { status: 410 }
      // The other attempt's POST was under way when the 410 came: it fails (the receiver is being retired).
      await waitFor(() => current().webhookUrl === undefined, 5_000, 'the 410 to switch the webhook off')
      return { status: 503 }
    },
  }
  const events = new GatewayEvents()
  const final: string[] = []
  events.on('delivery-failed', e => void (e.final && final.push(`${e.reason}`)))
  const box = new WebhookOutbox({
    ...{ storage: memoryStorage(), lock: new KeyedLock(), devices, sender, events, logger: silentLogger },
    ...{ settings: settings({ concurrencyPerLane: 2 }), liveness: soloLiveness() },
  })
  await box.start()
  try {
    await box.record(current(), message('second'))
    await waitFor(() => sent.length === 1, 5_000, 'the attempt of the second event')
    await box.record(current(), message('first'))
    await waitFor(async () => (await box.pending()) === 0, 5_000, 'both events to leave the outbox')
    const letters = await box.deadLetters()
    assert.equal(Object.fromEntries(letters.map(letter => [JSON.parse(letter.body).text, letter.reason])), { first: 'gone', second: 'gone' })
    assert.equal(final.sort(), ['gone', 'gone'])
  } finally {
    await box.close()
  }
})

test.run()
