import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { WebhookOutbox } from '../../../src/domain/webhooks/outbox.ts'
import type { WebhookDelivery } from '../../../src/ports/webhooks.ts'
import type { AtomicStorage } from '../../../src/ports/storage.ts'
import { GatewayEvents } from '../../../src/events.ts'
import { silentLogger } from '../../../src/logger.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { changingDevice, device, message, settings } from '../../helpers/outbox.ts'
import { soloLiveness } from '../../helpers/solo-liveness.ts'

const test = suite("WebhookOutbox: a new webhook URL set while a 410's sweep runs")

function gateOf() {
  let open!: () => void
  return { gate: new Promise<void>(resolve => (open = resolve)), open: () => open() }
}

/**
 * Three events of d1, two attempts at once: the first POST waits, the second gets 410 Gone. Its sweep lists the device's events (the
 * waiting one is left to its attempt) and starts burying the third, still in line; meanwhile the host sets a new URL (operation 3 or 4),
 * the first POST ends, and the third event's attempt starts, to the new URL. What the host relies on: an event is delivered or
 * dead-lettered, never both (a dead letter it redrives would reach the receiver twice).
 */
test("an event attempted to a new URL while the 410's sweep buries it is delivered or dead-lettered, not both", async () => {
  const inner = memoryStorage()
  // The sweep's write of a dead letter after the 410's own waits at the gate: the third event read, its letter not yet written.
  const [letter, firstPost, thirdPost] = [gateOf(), gateOf(), gateOf()]
  let [letters, reached] = [0, false]
  const storage: AtomicStorage = {
    ...inner,
    async set(key, value, ttlMs) {
      if (key.startsWith('webhook-dead:') && ++letters === 2) ((reached = true), await letter.gate)
      return inner.set(key, value, ttlMs)
    },
  }
  const { devices, current, set } = changingDevice()
  const sent: { id: string; url: string }[] = []
  const sender = {
    async send(delivery: WebhookDelivery) {
      const n = sent.push({ id: delivery.headers['webhook-id']!, url: delivery.url })
      if (n === 1) return (await firstPost.gate, { status: 200 })
      if (n === 2) return { status: 410 }
      return (await thirdPost.gate, { status: 200 })
    },
  }
  const events = new GatewayEvents()
  const [delivered, buried] = [[] as string[], [] as string[]]
  events.on('delivery', event => void delivered.push(event.eventId))
  events.on('delivery-failed', event => void (event.final && buried.push(event.eventId)))
  const webhooks = new WebhookOutbox({
    ...{ storage, lock: new KeyedLock(), devices, sender, events, logger: silentLogger },
    ...{ settings: settings({ concurrencyPerLane: 2, reconcileMs: 3_600_000 }), liveness: soloLiveness() },
  })
  await webhooks.start()
  try {
    for (const text of ['one', 'two', 'three']) await webhooks.record(device('d1'), message(text))
    await waitFor(() => reached, 5_000, "the 410's sweep to reach the third event")
    assert.is(current().webhookUrl, undefined, 'the 410 switched the webhook off')
    set({ ...current(), webhookUrl: 'https://receiver.example/new' })
    firstPost.open()
    await waitFor(() => sent.length === 3, 5_000, "the third event's attempt")
    assert.is(sent[2]!.url, 'https://receiver.example/new')
    letter.open()
    await new Promise(resolve => setTimeout(resolve, 200)) // the sweep ends
    thirdPost.open()
    await waitFor(async () => (await webhooks.pending()) === 0, 5_000, 'nothing pending')
    const third = sent[2]!.id
    const lettered = (await webhooks.deadLetters()).map(dead => dead.id)
    assert.ok(
      !(delivered.includes(third) && (lettered.includes(third) || buried.includes(third))),
      `the third event was delivered to the new URL and dead-lettered as gone (letters: ${lettered.length}, final failures: ${buried.length})`,
    )
    assert.equal(lettered, [sent[1]!.id], "the 410's event alone is a dead letter")
  } finally {
    letter.open()
    firstPost.open()
    thirdPost.open()
    await webhooks.close()
  }
})

test.run()
