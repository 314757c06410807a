import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { OutboxRecord } from '../../../src/domain/webhooks/outbox-store.ts'
import type { Device, Devices } from '../../../src/domain/devices.ts'
import type { WebhookDelivery, WebhookSender } from '../../../src/ports/webhooks.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { device, outbox, message, recordingSender } from '../../helpers/outbox.ts'

const test = suite('WebhookOutbox: a dead-lettering cut short')

test('redriving a dead letter whose event is still pending (a crash between the two writes) never sends it twice at once', async () => {
  const storage = memoryStorage()
  const both = (id: string | undefined) => id === 'a' || id === 'b'
  let release!: () => void
  const held = new Promise<void>(resolve => (release = resolve))
  let inFlight = 0
  let most = 0
  const sender: WebhookSender & { sent: WebhookDelivery[] } = {
    sent: [],
    async send(delivery) {
      sender.sent.push(delivery)
      most = Math.max(most, ++inFlight)
      await held
      inFlight--
      return { status: 200 }
    },
  }
  const a = outbox(storage, sender, { timeoutMs: 5_000 }, { id: 'a', isAlive: both, onDeparture() {} })
  const b = outbox(storage, sender, { timeoutMs: 5_000 }, { id: 'b', isAlive: both, onDeparture() {} })
  await a.start()
  await b.start()
  await a.record(device('d1'), message('twice'))
  await waitFor(() => sender.sent.length === 1, 5_000, "a's attempt")
  // A dead letter of the same event, as a process that crashed between writing it and removing the record leaves it.
  const [, record] = (await (a as any).store.pending()[Symbol.asyncIterator]().next()).value as [string, OutboxRecord]
  const { id, deviceId, accountId, event, body, createdAt } = record
  await storage.set(`webhook-dead:${id}`, { id, deviceId, accountId, event, body, createdAt, attempts: 0, deadAt: Date.now(), reason: 'max-age' })
  assert.ok(await b.redrive(id))
  await new Promise(resolve => setTimeout(resolve, 300))
  release()
  assert.is(most, 1, 'sent by two processes at once')
  await waitFor(async () => (await a.pending()) === 0, 5_000, 'the event to be delivered')
  await a.close()
  await b.close()
})

test('an event redriven fresh during an attempt is not dead-lettered as too old by the age that attempt read', async () => {
  const storage = memoryStorage()
  let release!: () => void
  const held = new Promise<void>(resolve => (release = resolve))
  const sender = recordingSender(() => 200)
  const answering = {
    send: async (delivery: WebhookDelivery) => (sender.sent.length === 0 ? (sender.sent.push(delivery), await held, { status: 500 }) : sender.send(delivery)),
  }
  const webhooks = outbox(storage, answering, { maxAgeMs: 1_000, timeoutMs: 5_000, reconcileMs: 3_600_000 })
  await webhooks.start()
  await webhooks.record(device('d1'), message('fresh'))
  await waitFor(() => sender.sent.length === 1, 5_000, 'the first attempt')
  // Its letter, as a dead-lettering cut short leaves it beside the pending record; redriven 0.7 s into the event's 1 s of age.
  const [, record] = (await (webhooks as any).store.pending()[Symbol.asyncIterator]().next()).value as [string, OutboxRecord]
  const { id, deviceId, accountId, event, body, createdAt } = record
  await storage.set(`webhook-dead:${id}`, { id, deviceId, accountId, event, body, createdAt, attempts: 0, deadAt: Date.now(), reason: 'max-age' })
  await new Promise(resolve => setTimeout(resolve, 700))
  assert.ok(await webhooks.redrive(id))
  // The attempt fails past the age it read at its claim, not past the redriven one.
  await new Promise(resolve => setTimeout(resolve, 400))
  release()
  await waitFor(() => sender.sent.length === 2, 5_000, 'the redriven event to be attempted again')
  await waitFor(async () => (await webhooks.pending()) === 0, 5_000, 'the event to be delivered')
  assert.equal(await webhooks.deadLetters(), [], 'the redriven event was dead-lettered')
  await webhooks.close()
})

test('an event redriven while the attempt that buried it is still ending is attempted again, not left to the next rescan', async () => {
  const storage = memoryStorage()
  // Device d1: its receiver answers 410; the webhook switch-off the 410 asks (devices.update) waits, and by then the host set a new URL.
  let current: Device = device('d1')
  let reached!: () => void
  const updating = new Promise<void>(resolve => (reached = resolve))
  let release!: () => void
  const held = new Promise<void>(resolve => (release = resolve))
  const devices = {
    get: async (id: string) => (id === 'd1' ? current : undefined),
    load: async (id: string) => (id === 'd1' ? current : undefined),
    peek: (id: string) => (id === 'd1' ? current : undefined),
    update: async (_id: string, change: (d: Device) => unknown) => {
      reached()
      await held
      const copy = structuredClone(current)
      change(copy)
      return (current = copy)
    },
  } as unknown as Devices
  const sender = recordingSender(delivery => (delivery.url.endsWith('/new') ? 200 : 410))
  const webhooks = outbox(storage, sender, { reconcileMs: 3_600_000 }, undefined, undefined, devices) // no rescan within this test
  await webhooks.start()
  await webhooks.record(device('d1'), message('again'))
  await updating // the event is a dead letter now; its attempt is still under way
  const [letter] = await webhooks.deadLetters()
  assert.ok(letter, 'the 410 dead-lettered the event')
  current = { ...current, webhookUrl: 'https://receiver.example/new' }
  assert.ok(await webhooks.redrive(letter!.id))
  release()
  await waitFor(() => sender.sent.length === 2, 5_000, 'the redriven event to be attempted')
  assert.is(sender.sent[1]!.url, 'https://receiver.example/new')
  await waitFor(async () => (await webhooks.pending()) === 0, 5_000, 'the event to be delivered')
  await webhooks.close()
})

test.run()
