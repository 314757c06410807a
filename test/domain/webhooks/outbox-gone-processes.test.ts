import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { WebhookOutbox } from '../../../src/domain/webhooks/outbox.ts'
import { GatewayEvents } from '../../../src/events.ts'
import { silentLogger } from '../../../src/logger.ts'
import type { WebhookSender } from '../../../src/ports/webhooks.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { changingDevice, message, settings } from '../../helpers/outbox.ts'
import { createOutboxStore, type OutboxRecord } from '../../../src/domain/webhooks/outbox-store.ts'

/** A receiver's 410 Gone with two processes delivering a device's events: each process settles the events it is delivering. */
const test = suite('WebhookOutbox: a 410 with two processes')

test("a 410 met by one process leaves the event another live process is POSTing to it: that one's 200 counts, no dead letter for a delivered event", async () => {
  const { devices, current } = changingDevice()
  const shared = memoryStorage()
  const alive = new Set(['A', 'B'])
  const liveness = (id: string) => ({ id, isAlive: (other: string | undefined) => other !== undefined && alive.has(other), onDeparture() {} })
  let answerB!: () => void
  const bAnswers = new Promise<void>(resolve => (answerB = resolve))
  const posted: string[] = []
  const delivered: string[] = []
  const senderOf = (name: string, status: number, answered: Promise<void>): WebhookSender => ({
    async send(delivery) {
      posted.push(`${name} ${JSON.parse(delivery.body).text}`)
      await answered
      return { status }
    },
  })
  const eventsB = new GatewayEvents()
  eventsB.on('delivery', ({ eventId }) => delivered.push(eventId))
  const processOf = (name: string, sender: WebhookSender, events: GatewayEvents) =>
    new WebhookOutbox({
      ...{ storage: shared.connectAgain(), lock: new KeyedLock(), devices, sender, events, logger: silentLogger },
      ...{ settings: settings(), liveness: liveness(name) },
    })
  const a = processOf('A', senderOf('A', 410, Promise.resolve()), new GatewayEvents())
  const b = processOf('B', senderOf('B', 200, bAnswers), eventsB)
  await a.start()
  await b.start()
  await b.record(current(), message('m1')) // B's attempt: its POST waits for the receiver
  await waitFor(() => posted.includes('B m1'), 5_000, "B's POST")
  await a.record(current(), message('m2')) // A's: 410, so A switches the webhook off and sweeps the device's pending events
  await waitFor(async () => (await a.deadLetters()).length > 0 && current().webhookUrl === undefined, 5_000, "A's 410 handled")
  answerB()
  await waitFor(() => delivered.length === 1, 5_000, "B's 200")
  assert.equal(
    (await a.deadLetters()).map(letter => JSON.parse(letter.body).text),
    ['m2'],
    'm1 was being delivered by B: not dead-lettered',
  )
  assert.is(await a.pending(), 0)
  await a.close()
  await b.close()
})

test("an attempt the 410's sweep left to this process, stalled in its POST, its event buried and redriven meanwhile (to a new URL) by another process, leaves the redriven event pending when its POST fails late", async () => {
  const { devices, current, set } = changingDevice()
  const shared = memoryStorage()
  const alive = new Set(['A', 'B'])
  const liveness = (id: string) => ({ id, isAlive: (other: string | undefined) => other !== undefined && alive.has(other), onDeparture() {} })
  let postedM2!: () => void
  const m2Posted = new Promise<void>(resolve => (postedM2 = resolve))
  let answerM2!: () => void
  const m2Answers = new Promise<void>(resolve => (answerM2 = resolve))
  // m1 answers 410 once m2's POST is under way (A's sweep leaves m2 to its attempt); m2's POST stalls, then fails (a 500).
  const sender: WebhookSender = {
    async send(delivery) {
      if (JSON.parse(delivery.body).text === 'm1') return await m2Posted.then(() => ({ status: 410 }))
      postedM2()
      await m2Answers
      return { status: 500 }
    },
  }
  const a = new WebhookOutbox({
    ...{ storage: shared.connectAgain(), lock: new KeyedLock(), devices, sender, events: new GatewayEvents(), logger: silentLogger },
    ...{ settings: settings({ timeoutMs: 30_000 }), liveness: liveness('A') },
  })
  await a.start()
  await a.record(current(), message('m1'))
  await a.record(current(), message('m2'))
  await waitFor(async () => (await a.deadLetters()).length > 0 && current().webhookUrl === undefined, 5_000, "A's 410 handled")
  const b = createOutboxStore(shared.connectAgain(), new KeyedLock())
  let m2: [string, OutboxRecord] | undefined
  for await (const entry of b.ofDevice('d1')) m2 = entry
  assert.ok(m2 && JSON.parse(m2[1].body).text === 'm2', "m2 pending, A's attempt under way")
  const [key, { id }] = m2
  // A stalls in m2's POST; B judges it gone, adopts m2 and buries it (no webhook URL); the host sets a new URL and redrives it through B.
  alive.delete('A')
  assert.ok(await b.adopt(key, liveness('B')), 'B adopted it')
  assert.ok(await b.deadLetter(key, 'no-webhook', Date.now()), 'B buried it')
  set({ ...current(), webhookUrl: 'https://new.example/hook' })
  const redriven = await b.redrive(id, Date.now(), 'B')
  assert.ok(redriven, 'the host redrove it')
  // A resumes: m2's POST to the old URL failed.
  answerM2()
  await a.close()
  assert.equal(await b.get(key), redriven, 'the redriven event is pending as the redrive left it, for the new URL')
  assert.equal(
    (await b.deadLetters()).map(letter => JSON.parse(letter.body).text),
    ['m1'],
    "only m1's dead letter: A's late failure buries m2 as gone only while it holds m2's claim",
  )
})

test.run()
