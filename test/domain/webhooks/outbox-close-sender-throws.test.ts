import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { WebhookSender } from '../../../src/ports/webhooks.ts'
import type { OutboxRecord } from '../../../src/domain/webhooks/outbox-store.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { device, message, outbox, recordingSender, texts } from '../../helpers/outbox.ts'

/**
 * docs/api.md: `closing` aborts as the gateway begins to stop, and a POST the sender has not begun
 * (still in its own queue) must not begin then: the sender throws, and the event is sent after the
 * restart. A host's sender throws what it likes (a plain Error, not the closing reason): that is no
 * failed attempt either, so the event is not counted, not pushed back by the retry schedule, and goes
 * out as soon as the next process starts.
 */
test("a host's sender that refuses, with a plain Error, a POST it had not begun when the stop began: not a counted attempt, sent at once after the restart", async () => {
  const storage = memoryStorage()
  let called = 0
  // A sender with a queue of its own: this delivery waits in it until the stop begins, then is refused unbegun.
  const queued: WebhookSender = {
    send: delivery =>
      new Promise((_, reject) => {
        called++
        delivery.closing!.addEventListener('abort', () => reject(new Error('sender closing: delivery not begun')), { once: true })
      }),
  }
  const retryMs = [60_000] // a counted attempt would be retried a minute later
  const first = outbox(storage, queued, { retryMs, timeoutMs: 5_000 })
  await first.start()
  await first.record(device('d1'), message('a'))
  await waitFor(() => called === 1, 5_000, 'the delivery to reach the sender')
  await first.close()
  const records: OutboxRecord[] = []
  for await (const [, record] of storage.list<OutboxRecord>('webhook-outbox')) records.push(record)
  assert.equal(
    records.map(record => record.attempts),
    [0],
    'the refused delivery is not counted',
  )

  const sender = recordingSender()
  const second = outbox(storage, sender, { retryMs })
  await second.start()
  await waitFor(() => sender.sent.length === 1, 3_000, 'the delivery at once after the restart')
  assert.equal(texts(sender), ['a'])
  await second.close()
})

test.run()
