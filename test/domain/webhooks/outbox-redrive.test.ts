import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { OutboxRecord } from '../../../src/domain/webhooks/outbox-store.ts'
import type { WebhookDelivery, WebhookSender } from '../../../src/ports/webhooks.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { device, outbox, message } from '../../helpers/outbox.ts'

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

test.run()
