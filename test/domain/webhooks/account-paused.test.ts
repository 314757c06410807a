import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { GatewayEventMap } from '../../../src/events.ts'
import { internalsOf } from '../../../src/internals.ts'
import { startGateway, waitFor } from '../../helpers/gateway.ts'
import { FRIEND } from '../../helpers/messaging.ts'
import { pausedWorld, type PausedWorld } from '../../helpers/paused-webhooks.ts'
import { WebhookOutbox } from '../../../src/domain/webhooks/outbox.ts'
import { PAUSED_RECHECK_MS, type AccountCheck } from '../../../src/domain/webhooks/paused.ts'
import { GatewayEvents } from '../../../src/events.ts'
import { silentLogger } from '../../../src/logger.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { device, devices, message, recordingSender, settings, texts } from '../../helpers/outbox.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { soloLiveness } from '../../helpers/solo-liveness.ts'

/**
 * A suspended or expired account's webhook events are held in the outbox (no attempt, no
 * `delivery-failed`), delivered in their order once it is resumed or renewed, and dead-lettered at
 * `webhookMaxAgeMs` when it is not (docs/api.md, "Delivery").
 */
const OTHER_PHONE = '5511966660004'

const test = suite<{ w?: PausedWorld }>('webhooks of a suspended or expired account: held, not attempted, delivered once active')

test.after.each(async ctx => {
  await ctx.w?.t.stop()
  ctx.w = undefined
})

test('a suspended account: its events are held unattempted, then delivered in their order once it is resumed', async ctx => {
  const w = (ctx.w = await pausedWorld(startGateway))
  await w.t.gateway.accounts.suspend(w.email)
  const ids = await w.receive(['primeira', 'segunda', 'terceira'])
  await w.heldOrSent(3)
  assert.equal(w.sent(), [], 'nothing reaches the webhook while the account is suspended')
  assert.is(await w.t.gateway.webhooks.pending(w.deviceId), 3, 'the events are kept in the outbox')
  assert.equal(await w.attemptsStored(), [0, 0, 0], 'no attempt counted')
  await w.t.gateway.accounts.resume(w.email)
  await waitFor(() => w.sent().length === 3, 10_000, 'the held events, after the resume')
  assert.equal(w.sent(), ids, 'in the order they happened')
  // A `delivery` event follows the store's record of the delivery, a moment after the POST arrived.
  await waitFor(() => w.events.delivery.length === 3, 10_000, 'the three delivery events')
  assert.equal(w.events['delivery-failed'], [], 'no failed attempt was reported')
  assert.equal(
    w.events.delivery.map(d => d.attempt),
    [1, 1, 1],
    'each delivered at its first attempt',
  )
  await waitFor(async () => (await w.t.gateway.webhooks.pending(w.deviceId)) === 0)
})

test('an expired plan: its events are held until renew, then delivered', async ctx => {
  const w = (ctx.w = await pausedWorld(startGateway))
  const { storage, epoch } = internalsOf(w.t.gateway)
  for await (const [key, value] of storage.list<{ email: string }>('account:'))
    if (value.email === w.email) await storage.set(key, { ...value, expiresOn: '2020-01-01' })
  await epoch.bump()
  const ids = await w.receive(['vencida'])
  await w.heldOrSent(1)
  assert.equal(w.sent(), [], 'nothing reaches the webhook while the plan is expired')
  assert.equal(await w.attemptsStored(), [0])
  await w.t.gateway.accounts.renew(w.email)
  await waitFor(() => w.sent().length === 1, 10_000, 'the held event, after the renewal')
  assert.equal(w.sent(), ids)
  assert.equal(w.events['delivery-failed'], [])
})

test('an account still suspended at webhookMaxAgeMs: its event is dead-lettered as max-age, never attempted', async ctx => {
  const w = (ctx.w = await pausedWorld(options => startGateway({ ...options, webhookMaxAgeMs: 1_500 })))
  await w.t.gateway.accounts.suspend(w.email)
  await w.receive(['esquecida'])
  await waitFor(async () => (await w.t.gateway.webhooks.deadLetters()).length === 1, 15_000, 'the dead letter')
  const [letter] = await w.t.gateway.webhooks.deadLetters()
  assert.equal([letter.reason, letter.attempts, letter.lastError], ['max-age', 0, 'the account was suspended or expired'])
  assert.equal(w.sent(), [])
  const failed = w.events['delivery-failed'] as GatewayEventMap['delivery-failed'][0][]
  assert.equal(
    failed.map(f => [f.final, f.reason, f.attempted, f.error]),
    [[true, 'max-age', false, 'the account was suspended or expired']],
  )
})

test('another account on the gateway is not held: its device delivers while the first is suspended', async ctx => {
  const w = (ctx.w = await pausedWorld(startGateway))
  const other = await w.t.register()
  const active = await w.t.linkedDevice(other.authkey, 'outra', OTHER_PHONE, { webhook: w.webhookUrl })
  await w.t.gateway.accounts.suspend(w.email)
  await w.receive(['suspensa'])
  await w.t.network.sendFromPhone(FRIEND, OTHER_PHONE, { type: 'text', text: 'ativa' })
  await waitFor(() => w.sent(active.id).length === 1, 10_000, "the active account's event")
  await w.heldOrSent(1)
  assert.equal(w.sent(), [], "the suspended account's event was not sent")
  assert.equal(w.sent(active.id), ['ativa'])
})

test('without an account change to wake them, held events go at their recheck (the rescan) once the account is active, in their order', async () => {
  let active = false
  const accounts = { get: async () => ({ id: 'acc' }), peek: () => ({ id: 'acc' }), active: () => active } as unknown as AccountCheck
  const sender = recordingSender()
  const events = new GatewayEvents()
  const failed: unknown[] = []
  events.on('delivery-failed', event => void failed.push(event))
  const box = new WebhookOutbox({
    ...{ storage: memoryStorage(), lock: new KeyedLock(), devices, sender, events, logger: silentLogger, accounts },
    ...{ settings: settings({ concurrencyPerLane: 1, maxAgeMs: 10 * PAUSED_RECHECK_MS }), liveness: soloLiveness() },
  })
  await box.start()
  const heldFrom = Date.now()
  const loop = (box as any).loop
  for (const id of ['m1', 'm2', 'm3']) {
    await box.record(device('d1'), message(id))
    const recordedAt = Date.now()
    await waitFor(() => Date.now() > recordedAt + 1, 1_000, 'the clock to move on')
  }
  // Each is looked at, and held: due again a minute later, not attempted.
  await waitFor(() => loop.timetable.size === 3 && loop.timetable.peek().due >= heldFrom + PAUSED_RECHECK_MS, 5_000, 'the three events held')
  assert.equal(sender.sent, [])
  active = true
  await loop.rescan() // the reconcile, every minute: stored records are due by their stored time
  await waitFor(() => sender.sent.length === 3, 5_000, 'the held events')
  assert.equal(texts(sender), ['m1', 'm2', 'm3'])
  assert.equal(failed, [])
  await box.close()
})

test.run()
