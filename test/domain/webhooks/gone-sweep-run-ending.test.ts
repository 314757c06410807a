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

const test = suite("WebhookOutbox: a 410's sweep meeting an attempt of another event as that attempt ends")

const later = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

/**
 * Event `one` gets a 410 while event `two`'s first attempt waits; `two`'s attempt then fails (500) and its run ends just as the 410's
 * sweep lists the device's events (the listing let through by `two`'s retry write, `ticks` microtasks later). Then a new URL is set.
 */
async function race(ticks: number) {
  const inner = memoryStorage()
  const listing = gateOf()
  let [listingHeld, listed] = [false, false]
  let armed = false
  const storage: AtomicStorage = {
    ...inner,
    list<T>(prefix: string) {
      if (!listingHeld || prefix !== 'webhook-outbox:d1:') return inner.list<T>(prefix)
      listingHeld = false
      return (async function* () {
        await listing.gate
        listed = true
        for (let n = 0; n < ticks; n++) await null
        yield* inner.list<T>(prefix)
      })()
    },
    async compareAndSet(key, expected, next, ttlMs) {
      const done = await inner.compareAndSet(key, expected, next, ttlMs)
      const written = next as { attempts?: number; lease?: unknown } | undefined
      if (armed && written?.attempts === 1 && !written.lease) ((armed = false), listing.open())
      return done
    },
  }
  const { devices, current, set } = changingDevice()
  const [first, second] = [gateOf(), gateOf()]
  const sent: string[] = []
  const sender = {
    async send(delivery: WebhookDelivery) {
      const text = JSON.parse(delivery.body).text as string
      sent.push(text)
      if (text === 'one') return (await first.gate, { status: 410 })
      if (sent.filter(t => t === 'two').length === 1) return (await second.gate, { status: 500 })
      return { status: 500 }
    },
  }
  const events = new GatewayEvents()
  const buried: { eventId: string; reason?: string; url: string }[] = []
  events.on('delivery-failed', event => void (event.final && buried.push(event)))
  const webhooks = new WebhookOutbox({
    storage,
    lock: new KeyedLock(),
    devices,
    sender,
    events,
    logger: silentLogger,
    settings: settings({ retryMs: [200], reconcileMs: 3_600_000 }),
    liveness: soloLiveness(),
  })
  await webhooks.start()
  await webhooks.record(device('d1'), message('one'))
  await webhooks.record(device('d1'), message('two'))
  await waitFor(() => sent.length === 2, 5_000, 'both first attempts')
  listingHeld = true // the sweep's listing waits
  first.open()
  await later(50)
  armed = true
  second.open()
  await waitFor(() => current().webhookUrl === undefined && listed, 5_000, 'the 410 and its sweep')
  await later(50)
  set({ ...current(), webhookUrl: 'https://receiver.example/new' })
  await later(500) // `two` pending, its retry (200 ms) to the new URL fails: retried, not buried
  await webhooks.close()
  return buried.filter(event => event.url === 'https://receiver.example/new')
}

function gateOf() {
  let open!: () => void
  return { gate: new Promise<void>(resolve => (open = resolve)), open: () => open() }
}

test('an event the sweep left to an attempt that was ending is not buried as gone on a later failure to a new URL', async () => {
  // The run's end spans a few microtasks: the listing is let through at each offset of it.
  for (let ticks = 0; ticks <= 8; ticks++) {
    const buriedAtNewUrl = await race(ticks)
    assert.equal(buriedAtNewUrl, [], `buried by a failure to the new URL (listing ${ticks} microtasks after the retry write)`)
  }
})

test.run()
