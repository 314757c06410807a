import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { GatewayEventMap } from '../../../src/events.ts'
import type { GatewayOptions } from '../../../src/options.ts'
import { startGateway, waitFor, type TestGateway } from '../../helpers/gateway.ts'
import { DEVICE_PHONE, FRIEND } from '../../helpers/messaging.ts'
import { startReceiver, type Receiver } from '../../helpers/receiver.ts'

/** What counts as delivered, when an event stops being tried, and what a device deletion takes with it (docs/api.md, Webhooks). */
type Failed = GatewayEventMap['delivery-failed'][0]
interface Context {
  t?: TestGateway
  receiver?: Receiver
  authkey: string
  deviceId: string
  failed: Failed[]
  delivered: unknown[]
}
const test = suite<Context>('webhook delivery rules')
test.after.each(async ctx => {
  await ctx.t?.stop()
  await ctx.receiver?.stop()
  ctx.t = ctx.receiver = undefined
})

async function setUp(ctx: Context, options: GatewayOptions = {}): Promise<TestGateway> {
  const receiver = (ctx.receiver = await startReceiver())
  const t = (ctx.t = await startGateway({ allowPrivateUrls: true, webhookRetryMs: [30], ...options }))
  ;[ctx.failed, ctx.delivered] = [[], []]
  t.gateway.events.on('delivery-failed', event => void ctx.failed.push(event))
  t.gateway.events.on('delivery', event => void ctx.delivered.push(event))
  ctx.authkey = (await t.register()).authkey
  ctx.deviceId = (await t.linkedDevice(ctx.authkey, 'loja', DEVICE_PHONE, { webhook: receiver.url })).id
  return t
}
const say = (t: TestGateway, text: string) => t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text })

test('a 300 is a failed attempt, retried; only a 2xx delivers', async ctx => {
  const t = await setUp(ctx)
  ctx.receiver!.answer((_, index) => (index === 0 ? 300 : 200))
  await say(t, 'redirecionado')
  await waitFor(() => ctx.delivered.length === 1, 10_000, 'the delivery')
  assert.is(ctx.receiver!.hooks.length, 2)
  assert.equal([ctx.failed[0]?.status, ctx.failed[0]?.final], [300, false])
})

test('at webhookMaxAgeMs the event is dead-lettered, whatever the retry schedule says, and never POSTed past it', async ctx => {
  const t = await setUp(ctx, { webhookMaxAgeMs: 1_000, webhookRetryMs: [60_000] })
  ctx.receiver!.answer(() => 500)
  await say(t, 'tarde')
  await waitFor(() => ctx.failed.some(event => event.final), 4_000, 'the dead letter at the maximum age, not a minute later')
  assert.is(ctx.receiver!.hooks.length, 1)
  assert.equal(ctx.failed.find(event => event.final)?.attempted, false, 'dead-lettered at its age, before a second POST')
})

test('deleting a device deletes its dead letters with it', async ctx => {
  const t = await setUp(ctx, { webhookMaxAgeMs: 100 })
  ctx.receiver!.answer(() => 500)
  await say(t, 'perdida')
  await waitFor(() => ctx.failed.some(event => event.final), 5_000, 'the dead letter')
  assert.is((await t.gateway.webhooks.deadLetters({ deviceId: ctx.deviceId })).length, 1)
  assert.is((await t.post('/api/developer', { authkey: ctx.authkey, message: ctx.deviceId, apagarDispositivo: 'true' })).status, 200)
  assert.equal(await t.gateway.webhooks.deadLetters(), [])
})

test.run()
