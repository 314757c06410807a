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

test.run()
