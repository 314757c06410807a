import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { WebhookOutbox } from '../../../src/domain/webhooks/outbox.ts'
import type { WebhookDelivery, WebhookResponse, WebhookSender } from '../../../src/ports/webhooks.ts'
import { GatewayEvents, type GatewayEventMap } from '../../../src/events.ts'
import { silentLogger } from '../../../src/logger.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { soloLiveness } from '../../helpers/solo-liveness.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { device, devices, message, settings } from '../../helpers/outbox.ts'

const test = suite('WebhookOutbox: a sender written in JavaScript that answers without a promise')

test('a sender whose send() returns its answer as a plain value (no promise) delivers the event once: not a failed attempt, not sent again', async () => {
  const sent: WebhookDelivery[] = []
  // A JavaScript adapter: send() is not async and returns the answer itself.
  const sender = {
    send(delivery: WebhookDelivery) {
      sent.push(delivery)
      return { status: 200 }
    },
  } as unknown as WebhookSender
  const events = new GatewayEvents()
  const delivered: GatewayEventMap['delivery'][0][] = []
  const failed: GatewayEventMap['delivery-failed'][0][] = []
  events.on('delivery', e => void delivered.push(e))
  events.on('delivery-failed', e => void failed.push(e))
  const box = new WebhookOutbox({
    storage: memoryStorage(),
    lock: new KeyedLock(),
    devices,
    sender,
    events,
    logger: silentLogger,
    settings: settings({ retryMs: [20] }),
    liveness: soloLiveness(),
  })
  await box.start()
  try {
    await box.record(device('d1'), message('plain'))
    await waitFor(() => delivered.length + failed.length > 0, 10_000, 'the attempt to end')
    await waitFor(async () => (await box.pending()) === 0 || failed.length > 1, 10_000, 'the event to leave the outbox, or a retry')
    assert.equal(
      failed.map(f => f.error),
      [],
      'no failed attempt',
    )
    assert.is(delivered.length, 1)
    assert.is(sent.length, 1, 'POSTed once')
    assert.is(await box.pending(), 0)
  } finally {
    await box.close()
  }
})

test('a sender that returns a thenable of its own (not a native promise) still counts: delivered once', async () => {
  const sent: WebhookDelivery[] = []
  const sender = {
    send(delivery: WebhookDelivery) {
      sent.push(delivery)
      return { then: (resolve: (r: WebhookResponse) => void) => resolve({ status: 200 }) }
    },
  } as unknown as WebhookSender
  const events = new GatewayEvents()
  let delivered = 0
  events.on('delivery', () => void delivered++)
  const box = new WebhookOutbox({
    storage: memoryStorage(),
    lock: new KeyedLock(),
    devices,
    sender,
    events,
    logger: silentLogger,
    settings: settings(),
    liveness: soloLiveness(),
  })
  await box.start()
  try {
    await box.record(device('d1'), message('thenable'))
    await waitFor(async () => delivered === 1 && (await box.pending()) === 0, 10_000, 'the delivery')
    assert.is(sent.length, 1)
  } finally {
    await box.close()
  }
})

test.run()
