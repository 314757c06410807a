import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { WebhookDelivery, WebhookSender } from '../../../src/ports/webhooks.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { device, message, outbox, recordingSender, texts } from '../../helpers/outbox.ts'

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

test.run()
