import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createHmac } from 'node:crypto'
import { DEVICE_PHONE, FRIEND } from '../../helpers/messaging.ts'
import { receiverWorld, stopReceiverWorld, type ReceiverWorld } from '../../helpers/receiver.ts'
import { parseRetryAfter } from '../../../src/domain/webhooks/retry.ts'

type Context = ReceiverWorld
const test = suite<Context>('helper-hooks: signature and Retry-After')
test.after.each(stopReceiverWorld)

/** docs/api.md: v1, + base64 HMAC-SHA256(base64-decoded secret after whsec_, `${id}.${ts}.${body}`), written from the docs alone. */
function documented(secret: string, id: string, ts: string, rawBody: Buffer): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
  const mac = createHmac('sha256', key)
  mac.update(Buffer.from(`${id}.${ts}.`, 'utf8'))
  mac.update(rawBody)
  return 'v1,' + mac.digest('base64')
}

test('the signature of every attempt matches the documented formula over the raw body bytes (non-ASCII text, retries)', async ctx => {
  Object.assign(ctx, await receiverWorld('sig-device', { webhookRetryMs: [50] }))
  ctx.receiver.answer((_, index) => (index === 0 ? 500 : 200))
  const text = 'Olá 👍🏽 ação — \u2028 "quoted" \\ \ud83d end'
  await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text })
  const hooks = await ctx.receiver.waitForHooks(2)
  for (const hook of hooks) {
    const raw = Buffer.from(hook.body, 'utf8')
    assert.is(hook.headers['webhook-signature'], documented(ctx.device.webhookSecret, hook.headers['webhook-id'], hook.headers['webhook-timestamp'], raw))
    assert.ok(Math.abs(Number(hook.headers['webhook-timestamp']) - hook.at / 1000) < 5)
  }
  assert.is(JSON.parse(hooks[1].body).text, text, 'the text arrives as sent (a lone surrogate JSON-escaped)')
})

test('parseRetryAfter: text that is neither delta-seconds nor an HTTP date is unreadable (the schedule applies)', () => {
  const now = Date.parse('2025-06-01T00:00:00Z')
  for (const value of ['retry in 60', 'wait 5', 'after 10', '10 (seconds)', 'Retry 120', 'x 7', '1 z', 'next 3', 'foo 2099'])
    assert.is(parseRetryAfter(value, now), undefined, value)
})

test('parseRetryAfter: an asctime HTTP date is GMT, whatever the host time zone', () => {
  const saved = process.env.TZ
  process.env.TZ = 'America/Sao_Paulo'
  try {
    const now = Date.parse('2025-06-01T00:00:00Z')
    assert.is(parseRetryAfter('Sun Jun  1 00:10:00 2025', now), 600_000)
  } finally {
    if (saved === undefined) delete process.env.TZ
    else process.env.TZ = saved
  }
})

test('a 503 with a garbage Retry-After is retried on the schedule (60 s), not hammered every second', async ctx => {
  Object.assign(ctx, await receiverWorld('ra-device', { webhookRetryMs: [60_000] }))
  ctx.receiver.answer(() => ({ status: 503, headers: { 'retry-after': 'retry in 60' } }))
  await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'oi' })
  await ctx.receiver.waitForHooks(1)
  await new Promise(resolve => setTimeout(resolve, 3_500))
  assert.is(ctx.receiver.hooks.length, 1, `POSTed ${ctx.receiver.hooks.length} times in 3.5 s`)
})

test.run()
