import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { Webhook } from 'standardwebhooks'
import type { WebhookSender } from '../../../src/index.ts'
import { DEVICE_PHONE, FRIEND } from '../../helpers/messaging.ts'
import { receiverWorld, stopReceiverWorld, type ReceiverWorld } from '../../helpers/receiver.ts'

/**
 * The default sender queues a device's deliveries past 4 in flight to its receiver host; a delivery may
 * wait there up to `webhookTimeoutMs` (any positive value, up to 24.8 days). Its `webhook-timestamp`
 * must be that of the POST, not of the attempt's start: a standard verifier refuses one over 5 minutes
 * old, and every retry would wait as long again. The clock (Date.now) is moved on 6 minutes while the
 * delivery waits; the fence and the time-outs run on the monotonic clock.
 */
type Context = ReceiverWorld
const test = suite<Context>('webhook-timestamp: of the POST, after the wait in the sender queue')
const realNow = Date.now
test.after.each(async ctx => {
  Date.now = realNow
  await stopReceiverWorld(ctx)
})

test('a delivery that waited 6 minutes in the default sender queue reaches its receiver with a fresh timestamp, and verifies', async ctx => {
  Object.assign(ctx, await receiverWorld('queued-stamp', { webhookTimeoutMs: 10 * 60_000 }))
  const { t, receiver, device } = ctx
  // The first 4 (the device's share of its receiver host) are answered late: the 5th waits behind them.
  receiver.answer((_, index) => (index < 4 ? { status: 200, delayMs: 3_000 } : 200))
  for (let i = 0; i < 5; i++) await t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: `m${i}` })
  const verify = (hook: { body: string; headers: Record<string, string> }) =>
    (new Webhook(device.webhookSecret).verify(hook.body, hook.headers) as { text: string }).text
  const first = (await receiver.waitForHooks(4)).map(verify)
  assert.is(new Set(first).size, 4, 'a standard verifier (5 minutes) takes the first 4')
  await new Promise(resolve => setTimeout(resolve, 200))
  assert.is(receiver.hooks.length, 4, 'the 5th waits in the sender queue')
  let skew = 0
  Date.now = () => realNow() + skew
  skew = 6 * 60_000
  const hooks = await receiver.waitForHooks(5)
  const late = hooks[4]!
  const age = Math.floor(Date.now() / 1000) - Number(late.headers['webhook-timestamp'])
  assert.ok(age <= 1, `the timestamp is of the POST (it was ${age} s old)`)
  assert.equal([...first, verify(late)].sort(), ['m0', 'm1', 'm2', 'm3', 'm4'], 'and the 5th, 6 minutes later')
})

test("a host's sender with a queue of its own POSTs freshHeaders() after the wait: the receiver verifies it", async ctx => {
  let skew = 0
  Date.now = () => realNow() + skew
  const seen: { sameAtOnce: boolean; headersFollow: boolean }[] = []
  let posted!: () => void
  const postedOnce = new Promise<void>(resolve => (posted = resolve)) // not waitFor: its time-out runs on the clock moved on
  // Waits 6 minutes (by the clock) in its queue, then POSTs with fetch what freshHeaders() answers.
  const queued: WebhookSender = {
    async send(delivery) {
      seen.push({ sameAtOnce: delivery.freshHeaders?.() === delivery.headers, headersFollow: false })
      skew += 6 * 60_000
      const headers = delivery.freshHeaders!()
      seen.at(-1)!.headersFollow = delivery.headers === headers
      const response = await fetch(delivery.url, { method: 'POST', headers, body: delivery.body, redirect: 'manual' })
      await response.arrayBuffer()
      posted()
      return { status: response.status }
    },
  }
  Object.assign(ctx, await receiverWorld('host-queue-stamp', { webhooks: queued, webhookTimeoutMs: 10 * 60_000 }))
  await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'Olá' })
  await postedOnce
  const [hook] = ctx.receiver.hooks
  assert.is((new Webhook(ctx.device.webhookSecret).verify(hook!.body, hook!.headers) as { text: string }).text, 'Olá')
  assert.equal(seen[0], { sameAtOnce: true, headersFollow: true }, 'not signed again without a wait; headers are the fresh ones after')
})

test.run()
