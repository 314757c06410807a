import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { WebhookDelivery, WebhookSender } from '../../../src/ports/webhooks.ts'
import type { Storage } from '../../../src/ports/storage.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { device, message, outbox, recordingSender, texts } from '../../helpers/outbox.ts'
import { startReceiver } from '../../helpers/receiver.ts'
import { httpWebhookSender } from '../../../adapters/webhook-http/index.ts'

/**
 * A graceful stop (gateway.close(), SIGTERM) with a delivery in flight to a receiver that is slow but
 * answers within the time-out. The POST has reached the receiver: cutting it short and releasing the
 * event would deliver it again after the restart, a duplicate the docs admit only for a crash.
 */
const test = suite('WebhookOutbox close: deliveries in flight finish')

/** A receiver that has the POST at once and answers 200 after `answerMs`; like the default sender, an aborted signal cuts the request (no answer). */
function slowReceiver(answerMs: number): WebhookSender & { sent: WebhookDelivery[] } {
  const sent: WebhookDelivery[] = []
  return {
    sent,
    send(delivery) {
      sent.push(delivery)
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => resolve({ status: 200 }), answerMs)
        delivery.signal?.addEventListener('abort', () => (clearTimeout(timer), reject(new Error('aborted: the gateway is stopping'))), { once: true })
      })
    },
  }
}

test('a delivery in flight at close, answered 200 after 3 s (time-out 5 s): delivered once, nothing left pending, nothing sent after the restart', async () => {
  const storage = memoryStorage()
  const slow = slowReceiver(3_000)
  const first = outbox(storage, slow, { timeoutMs: 5_000 })
  await first.start()
  await first.record(device('d1'), message('a'))
  await waitFor(() => slow.sent.length === 1, 5_000, 'the POST to reach the receiver')
  await first.close()
  assert.is(await first.pending(), 0, 'the event the receiver took is not pending any more')

  const sender = recordingSender()
  const second = outbox(storage, sender)
  await second.start()
  await second.close()
  assert.equal(texts(sender), [], 'the restarted outbox sends nothing again')
  assert.equal(texts(slow), ['a'])
})

test('an attempt still unanswered at its time-out is a failed attempt: the event stays pending and the next process delivers it', async () => {
  const storage = memoryStorage()
  const hung = slowReceiver(60_000)
  const first = outbox(storage, hung, { timeoutMs: 1_000 })
  await first.start()
  await first.record(device('d1'), message('b'))
  await waitFor(() => hung.sent.length === 1, 5_000, 'the POST to reach the receiver')
  await first.close()
  assert.is(await first.pending(), 1)

  const sender = recordingSender()
  const second = outbox(storage, sender)
  await second.start()
  await waitFor(() => sender.sent.length === 1, 5_000, 'the delivery after the restart')
  assert.equal(texts(sender), ['b'])
  await second.close()
})

test('an attempt whose claim was still being read when the stop began sends nothing: no POST the grace would cut short, the event left for the next process, delivered once', async () => {
  // Reads of outbox records take 1.2 s (a slow store, within its 2 s guard); the receiver answers 200 after 900 ms (time-out 1 s, grace 2 s from the stop).
  const base = memoryStorage()
  let slowReads = false
  const storage: Storage = {
    ...base,
    get: async <T>(key: string) => {
      if (slowReads && key.startsWith('webhook-outbox:')) await new Promise(resolve => setTimeout(resolve, 1_200))
      return base.get<T>(key)
    },
  }
  const slow = slowReceiver(900)
  const first = outbox(storage, slow, { timeoutMs: 1_000 })
  await first.start()
  slowReads = true
  void first.record(device('d1'), message('c'))
  await new Promise(resolve => setTimeout(resolve, 50)) // its attempt launched, the claim's read under way
  await first.close()
  assert.equal(texts(slow), [], 'no POST started once the stop began')
  slowReads = false

  const sender = recordingSender()
  const second = outbox(storage, sender)
  await second.start()
  await waitFor(() => sender.sent.length === 1, 5_000, 'the delivery after the restart')
  assert.equal(texts(sender), ['c'])
  await second.close()
})

test("deliveries waiting in the default sender's queue at close are not begun: the 4 POSTs under way finish, the other 2 events go after the restart, each once", async () => {
  const receiver = await startReceiver(() => ({ status: 200, delayMs: 1_500 }))
  const http = httpWebhookSender({ allowPrivateUrls: true }) // 4 POSTs at once per device
  const toReceiver: WebhookSender = { send: delivery => http.send({ ...delivery, url: receiver.url }) }
  try {
    const storage = memoryStorage()
    const production = { timeoutMs: 5_000, concurrencyPerLane: 8, capacity: 10_000 } // the defaults: 8 attempts of a device at once, the sender's 4 POSTs
    const first = outbox(storage, toReceiver, production)
    await first.start()
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) await first.record(device('d1'), message(id))
    await receiver.waitForHooks(4)
    await first.close()
    assert.is(receiver.hooks.length, 4, 'no POST began once the stop had begun (one begun then could be cut by the grace and sent again)')
    assert.is(await first.pending(), 2)

    const second = outbox(storage, toReceiver, production)
    await second.start()
    await receiver.waitForHooks(6)
    await waitFor(async () => (await second.pending()) === 0, 5_000, 'both delivered')
    await second.close()
    assert.equal(receiver.hooks.map(hook => hook.payload.text).sort(), ['a', 'b', 'c', 'd', 'e', 'f'], 'each event once')
  } finally {
    await http.close?.()
    await receiver.stop()
  }
})

test.run()
