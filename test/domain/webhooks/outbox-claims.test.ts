import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { WebhookOutbox } from '../../../src/domain/webhooks/outbox.ts'
import { createOutboxStore, outboxKey, type OutboxRecord } from '../../../src/domain/webhooks/outbox-store.ts'
import type { Devices } from '../../../src/domain/devices.ts'
import type { Liveness } from '../../../src/domain/instances.ts'
import { newClaim } from '../../../src/domain/claims.ts'
import type { WebhookSender } from '../../../src/ports/webhooks.ts'
import type { Storage } from '../../../src/ports/storage.ts'
import { GatewayEvents } from '../../../src/events.ts'
import { silentLogger } from '../../../src/logger.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { changingDevice, device, devices, lateRecord, message, outbox, recordingSender, settings } from '../../helpers/outbox.ts'

/** The claims (leases) of the outbox's records: who may attempt an event while another attempt of it is under way, and what a hand-back records. */
const test = suite('WebhookOutbox: claims on a record')

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))
/** The liveness of process `id` in a cluster where the processes in `alive` live. */
const liveness = (id: string, alive: Set<string>): Liveness => ({ id, isAlive: other => other !== undefined && alive.has(other), onDeparture() {} })
/** A gateway process's outbox on `storage` (its own view of the store: connectAgain). */
const processOf = (storage: Storage, me: Liveness, sender: WebhookSender, deviceStore: Devices = devices, events = new GatewayEvents()) =>
  new WebhookOutbox({ storage, lock: new KeyedLock(), devices: deviceStore, sender, events, logger: silentLogger, settings: settings(), liveness: me })
/** The one pending record of `storage`. */
async function onlyRecord(storage: Storage): Promise<[key: string, record: OutboxRecord]> {
  const found: [string, OutboxRecord][] = []
  for await (const [key, record] of storage.list<OutboxRecord>('webhook-outbox:')) found.push([key.slice('webhook-outbox:'.length), record])
  assert.is(found.length, 1, 'one pending record')
  return found[0]
}

test('an attempt that outlasts the 1 s time-out (a slow store read, then a POST answered in 900 ms) keeps its claim: another live process redriving the event does not POST it again', async () => {
  const shared = memoryStorage()
  const alive = new Set(['A', 'B'])
  const posted: string[] = []
  const senderOf = (name: string, answerMs: number): WebhookSender => ({
    async send(delivery) {
      posted.push(`${name} ${JSON.parse(delivery.body).text}`)
      await sleep(answerMs)
      return { status: 200 }
    },
  })
  // A's store is slow: reading the device takes 500 ms, so its attempt (claim at 0, POST at 500, answer at 1400) lasts longer than the time-out.
  const slowDevices = { get: async (id: string) => (await sleep(500), devices.get(id)), update: devices.update } as unknown as Devices
  const eventsA = new GatewayEvents()
  let deliveredByA = false
  eventsA.on('delivery', () => (deliveredByA = true))
  const a = processOf(shared.connectAgain(), liveness('A', alive), senderOf('A', 900), slowDevices, eventsA)
  const b = processOf(shared.connectAgain(), liveness('B', alive), senderOf('B', 0))
  await a.start()
  await b.start()
  await a.record(device('d1'), message('m1'))
  await waitFor(async () => (await onlyRecord(shared))[1].lease?.owner === 'A', 5_000, "A's claim")
  // A dead letter of the same event, as a dead-lettering cut short (a crash between its two writes) leaves it; B redrives it at once.
  const [, { id, deviceId, accountId, event, body, createdAt }] = await onlyRecord(shared)
  await shared.set(`webhook-dead:${id}`, { id, deviceId, accountId, event, body, createdAt, attempts: 0, deadAt: Date.now(), reason: 'max-age' })
  assert.ok(await b.redrive(id))
  await waitFor(() => deliveredByA, 5_000, "A's delivery")
  await sleep(300) // B looked again past the time-out (1 s after it first saw A's claim) while A's POST was under way
  assert.equal(posted, ['A m1'], 'one POST: B left the event to the attempt holding its claim')
  assert.is(await a.pending(), 0)
  await a.close()
  await b.close()
})

test("a 410 leaves this process's own attempt under way of another event of the device: its 200 counts, no dead letter for it", async () => {
  const { devices: deviceStore, current } = changingDevice()
  let postedM2!: () => void
  const m2Posted = new Promise<void>(resolve => (postedM2 = resolve))
  let answerM2!: () => void
  const m2Answers = new Promise<void>(resolve => (answerM2 = resolve))
  const sender: WebhookSender = {
    async send(delivery) {
      if (JSON.parse(delivery.body).text === 'm1') return await m2Posted.then(() => ({ status: 410 })) // gone, once m2's POST is under way
      postedM2()
      await m2Answers
      return { status: 200 }
    },
  }
  const events = new GatewayEvents()
  const delivered: string[] = []
  events.on('delivery', ({ eventId }) => delivered.push(eventId))
  const box = processOf(memoryStorage(), liveness('A', new Set(['A'])), sender, deviceStore, events)
  await box.start()
  await box.record(current(), message('m1'))
  await box.record(current(), message('m2'))
  await waitFor(async () => (await box.deadLetters()).length > 0 && current().webhookUrl === undefined, 5_000, 'the 410 handled')
  answerM2()
  await waitFor(() => delivered.length === 1, 5_000, "m2's 200")
  assert.equal(
    (await box.deadLetters()).map(letter => JSON.parse(letter.body).text),
    ['m1'],
    'm2 was being delivered by this process: not dead-lettered',
  )
  assert.is(await box.pending(), 0)
  await box.close()
})

test("retryLater by a process whose claim was taken over leaves the record as the new holder's claim has it", async () => {
  const storage = memoryStorage()
  const store = createOutboxStore(storage, new KeyedLock())
  const alive = new Set(['A', 'B'])
  const record = lateRecord('m1', 'B')
  const key = outboxKey('d1', record.id)
  await store.add(record)
  assert.type(await store.claim(key, liveness('B', alive), Date.now(), 7_000), 'object', "B's claim")
  const claimed = await store.get(key)
  const lost = newClaim('A', 7_000) // A's claim, taken over since
  await store.retryLater(key, lost.token, { dueAt: Date.now() + 60_000, counted: true, lastStatus: 500 }) // A's attempt failed, too late
  assert.equal(await store.get(key), claimed, "B's claim, due time and attempts unchanged")
  assert.type(await store.claim(key, liveness('A', alive), Date.now(), 7_000), 'number', "B's claim still keeps A off")
})

test('a late retryLater of a claim taken over, once the new holder released its own, leaves the record as that holder left it (its due time and attempts)', async () => {
  const store = createOutboxStore(memoryStorage(), new KeyedLock())
  const alive = new Set(['A', 'B'])
  const record = lateRecord('m1', 'A')
  const key = outboxKey('d1', record.id)
  await store.add(record)
  // A claims the event and POSTs it, then stalls (SIGSTOP); B judges it gone, adopts the event, attempts it (a 503) and plans its retry in an hour.
  const byA = await store.claim(key, liveness('A', alive), Date.now(), 7_000)
  assert.type(byA, 'object', "A's claim")
  alive.delete('A')
  assert.ok(await store.adopt(key, liveness('B', alive)), 'B adopted it')
  const byB = await store.claim(key, liveness('B', alive), Date.now(), 7_000)
  assert.type(byB, 'object', "B's claim")
  const planned = Date.now() + 3_600_000
  await store.retryLater(key, (byB as OutboxRecord).lease!.token, { dueAt: planned, counted: true, lastStatus: 503 })
  const left = await store.get(key)
  assert.equal({ dueAt: left?.dueAt, attempts: left?.attempts, lease: left?.lease }, { dueAt: planned, attempts: 1, lease: undefined })
  // A resumes: its POST had not begun (a stop), so it hands its attempt back, due now and not counted; or it failed (a 500), counted.
  await store.retryLater(key, (byA as OutboxRecord).lease!.token, { dueAt: Date.now(), counted: false })
  assert.equal(await store.get(key), left, "B's due time kept: A's hand-back of a claim it lost changes nothing")
  await store.retryLater(key, (byA as OutboxRecord).lease!.token, { dueAt: Date.now() + 20, counted: true, lastStatus: 500 })
  assert.equal(await store.get(key), left, "B's due time and attempts kept: A's late failure of a claim it lost changes nothing")
})

test('an attempt that stalled past the maximum age, its event buried and redriven meanwhile by another process, leaves the redriven event pending when its POST fails late', async () => {
  const shared = memoryStorage()
  const alive = new Set(['A', 'B'])
  const maxAgeMs = 60_000
  // A pending event of A's, 2 s short of the maximum age: A's attempt of it (its last) starts at once.
  const record = { ...lateRecord('m1', 'A'), createdAt: Date.now() - maxAgeMs + 2_000 }
  const key = outboxKey('d1', record.id)
  await shared.set(`webhook-outbox:${key}`, record)
  let posted = false
  let answer!: () => void
  const answered = new Promise<void>(resolve => (answer = resolve))
  const a = new WebhookOutbox({
    storage: shared.connectAgain(),
    lock: new KeyedLock(),
    devices,
    sender: { send: async () => ((posted = true), await answered, { status: 500 }) },
    events: new GatewayEvents(),
    logger: silentLogger,
    settings: settings({ maxAgeMs, timeoutMs: 30_000 }),
    liveness: liveness('A', alive),
  })
  await a.start()
  await waitFor(() => posted, 5_000, "A's POST")
  // A stalls in its POST past the event's maximum age; B judges it gone, adopts the event and buries it (too old); the host redrives it through B.
  await sleep(record.createdAt + maxAgeMs - Date.now() + 10)
  alive.delete('A')
  const b = createOutboxStore(shared.connectAgain(), new KeyedLock())
  assert.ok(await b.adopt(key, liveness('B', alive)), 'B adopted it')
  assert.ok(await b.deadLetter(key, 'max-age', Date.now()), 'B buried it')
  const redriven = await b.redrive(record.id, Date.now(), 'B')
  assert.ok(redriven, 'the host redrove it')
  // A resumes: its POST failed (a 500), past the age of the event it claimed.
  answer()
  await a.close()
  assert.equal(await b.get(key), redriven, 'the redriven event is pending as the redrive left it, fresh')
  assert.equal(await b.deadLetters(), [], 'no dead letter: A judged the age of the event it had claimed, not of the redriven one')
})

test("a gone process's record that a live process is POSTing under its claim: another process adopts it but does not POST it while the claim holds", async () => {
  const shared = memoryStorage()
  const alive = new Set(['A', 'B']) // C is gone; A holds a claim on C's record (it redrove it)
  const record = { ...lateRecord('m1', 'C'), lease: newClaim('A', 7_000) }
  const key = outboxKey('d1', record.id)
  await shared.set(`webhook-outbox:${key}`, record)
  const posted: string[] = []
  const b = processOf(shared.connectAgain(), liveness('B', alive), { send: async delivery => (posted.push(JSON.parse(delivery.body).text), { status: 200 }) })
  await b.start()
  await sleep(300)
  assert.equal(posted, [], "no POST while A's claim holds")
  const [, stored] = await onlyRecord(shared)
  assert.is(stored.owner, 'B', 'B adopted it')
  assert.is(stored.lease?.owner, 'A', "A's claim kept")
  const store = createOutboxStore(shared.connectAgain(), new KeyedLock())
  assert.type(await store.claim(key, liveness('B', alive), Date.now(), 7_000), 'number', 'claim() answers when to look again')
  await b.close()
})

test("an attempt handed back by a graceful stop (its POST still in the sender's queue) is not counted: the stored record keeps its attempts", async () => {
  const storage = memoryStorage()
  let queued = 0
  // Like the default sender's queue: a POST not begun when the stop begins is never begun (it throws the closing reason).
  const sender: WebhookSender = {
    send: delivery =>
      new Promise((_, reject) => {
        queued++
        delivery.closing!.addEventListener('abort', () => reject(delivery.closing!.reason), { once: true })
      }),
  }
  const first = outbox(storage, sender)
  await first.start()
  await first.record(device('d1'), message('m1'))
  await waitFor(() => queued === 1, 5_000, 'the attempt waiting in the queue')
  await first.close()
  const [, stored] = await onlyRecord(storage)
  assert.is(stored.attempts, 0, 'no attempt counted')
  assert.is(stored.lease, undefined, 'the claim released')
})

test('an event whose claim another live process holds is looked at again when that claim runs out, once, not over and over meanwhile; then delivered once', async () => {
  const shared = memoryStorage()
  const alive = new Set(['A', 'B'])
  const key = outboxKey('d1', 'e1')
  // B's view of the store, counting its reads of the record (each look at it: a claim attempt reads it first).
  const mine = shared.connectAgain()
  let looks = 0
  const counting: Storage = { ...mine, get: <T>(k: string) => (k === `webhook-outbox:${key}` && looks++, mine.get<T>(k)) }
  const sender = recordingSender()
  let looksAtPost = 0
  const b = processOf(counting, liveness('B', alive), { send: delivery => ((looksAtPost = looks), sender.send(delivery)) })
  await b.start()
  // A pending event of d1 that live process A is attempting under a 400 ms claim, and its dead letter (a dead-lettering cut short); B redrives it.
  const now = Date.now()
  const event = {
    id: 'e1',
    deviceId: 'd1',
    accountId: 'acc',
    event: 'Texto' as const,
    body: JSON.stringify({ event: 'Texto', text: 'e1' }),
    createdAt: now,
    attempts: 0,
  }
  await shared.set(`webhook-outbox:${key}`, { ...event, dueAt: now, owner: 'A', lease: newClaim('A', 400) } satisfies OutboxRecord)
  await shared.set('webhook-dead:e1', { ...event, deadAt: now, reason: 'max-age' })
  assert.ok(await b.redrive('e1'))
  const redriven = looks
  await waitFor(() => sender.sent.length === 1, 5_000, "B's delivery once A's claim ran out")
  assert.ok(
    looksAtPost - redriven <= 5,
    `B looked at the event ${looksAtPost - redriven} times before its POST: once, then again when A's claim ran out (a look a millisecond early aside)`,
  )
  await sleep(100)
  assert.is(sender.sent.length, 1, 'delivered once')
  assert.is(await b.pending(), 0)
  await b.close()
})

test("an attempt that stalled in its POST, its event buried and redriven meanwhile (to a new URL) by another process, leaves the redriven event pending when the old URL's 410 comes late", async () => {
  const shared = memoryStorage()
  const alive = new Set(['A', 'B'])
  const { devices: deviceStore, current, set } = changingDevice()
  const record = lateRecord('m1', 'A')
  const key = outboxKey('d1', record.id)
  await shared.set(`webhook-outbox:${key}`, record)
  let posted = false
  let answer!: () => void
  const answered = new Promise<void>(resolve => (answer = resolve))
  const a = new WebhookOutbox({
    storage: shared.connectAgain(),
    lock: new KeyedLock(),
    devices: deviceStore,
    sender: { send: async () => ((posted = true), await answered, { status: 410 }) },
    events: new GatewayEvents(),
    logger: silentLogger,
    settings: settings({ timeoutMs: 30_000 }),
    liveness: liveness('A', alive),
  })
  await a.start()
  await waitFor(() => posted, 5_000, "A's POST")
  // A stalls in its POST; B judges it gone, adopts the event and buries it (the host had switched the webhook off); the host sets a new URL and redrives it through B.
  alive.delete('A')
  const b = createOutboxStore(shared.connectAgain(), new KeyedLock())
  assert.ok(await b.adopt(key, liveness('B', alive)), 'B adopted it')
  assert.ok(await b.deadLetter(key, 'no-webhook', Date.now()), 'B buried it')
  set({ ...current(), webhookUrl: 'https://new.example/hook' })
  const redriven = await b.redrive(record.id, Date.now(), 'B')
  assert.ok(redriven, 'the host redrove it')
  // A resumes: the old URL answered 410 Gone.
  answer()
  await a.close()
  assert.equal(await b.get(key), redriven, 'the redriven event is pending as the redrive left it, for the new URL')
  assert.equal(await b.deadLetters(), [], "no dead letter: A's 410 buries only the event it had claimed")
  assert.is(current().webhookUrl, 'https://new.example/hook', 'the new URL kept')
})

test.run()
