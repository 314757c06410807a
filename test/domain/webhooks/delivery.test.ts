import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startGateway, waitFor, type TestGateway } from '../../helpers/gateway.ts'
import { startReceiver, type Receiver } from '../../helpers/receiver.ts'
import type { GatewayEventMap } from '../../../src/events.ts'
import type { GatewayOptions } from '../../../src/options.ts'
import { internalsOf } from '../../../src/internals.ts'

const DEVICE_PHONE = '5511999990001'
const FRIEND = '5511988880002'

type Delivered = GatewayEventMap['delivery'][0]
type Failed = GatewayEventMap['delivery-failed'][0]

interface Context {
  t: TestGateway
  receiver: Receiver
  authkey: string
  device: { id: string; appkey: string; webhookSecret: string }
  delivered: Delivered[]
  failed: Failed[]
}

const test = suite<Context>('webhook delivery: retries, Retry-After, 410, dead letters')

async function setUp(ctx: Context, options: GatewayOptions = {}): Promise<void> {
  ctx.receiver = await startReceiver()
  ctx.t = await startGateway({ allowPrivateUrls: true, webhookRetryMs: [30], ...options })
  ctx.delivered = []
  ctx.failed = []
  ctx.t.gateway.events.on('delivery', e => void ctx.delivered.push(e))
  ctx.t.gateway.events.on('delivery-failed', e => void ctx.failed.push(e))
  ctx.authkey = (await ctx.t.register()).authkey
  ctx.device = await ctx.t.linkedDevice(ctx.authkey, 'delivery-device', DEVICE_PHONE, { webhook: ctx.receiver.url })
}

test.after.each(async ctx => {
  await ctx.t?.stop()
  await ctx.receiver?.stop()
})

const say = (ctx: Context, text: string) => ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text })

test('a receiver that fails twice then answers 200 gets the event on the third attempt, with the same webhook-id', async ctx => {
  await setUp(ctx)
  ctx.receiver.answer((_, index) => (index < 2 ? 500 : 200))
  const id = await say(ctx, 'persistente')
  await waitFor(() => ctx.delivered.length === 1, 10_000, 'the delivery')
  const hooks = ctx.receiver.hooks
  assert.is(hooks.length, 3)
  assert.is(new Set(hooks.map(h => h.headers['webhook-id'])).size, 1)
  assert.is(new Set(hooks.map(h => h.body)).size, 1)
  assert.is(JSON.parse(hooks[2].body).idMessagem, id)
  ctx.receiver.verified(ctx.device.webhookSecret)
  assert.equal(
    ctx.failed.map(f => [f.attempt, f.status, f.final]),
    [
      [1, 500, false],
      [2, 500, false],
    ],
  )
  assert.is(ctx.delivered[0].attempt, 3)
  assert.is(ctx.delivered[0].status, 200)
  assert.is(ctx.delivered[0].eventId, hooks[0].headers['webhook-id'])
  assert.is(await ctx.t.gateway.webhooks.pending(), 0)
})

test('a receiver that cannot be reached is retried like one that fails', async ctx => {
  await setUp(ctx)
  const url = ctx.receiver.url
  await ctx.receiver.stop()
  await say(ctx, 'ninguém em casa')
  await waitFor(() => ctx.failed.length >= 2, 10_000, 'two failed attempts')
  assert.ok(ctx.failed.every(f => f.status === undefined && typeof f.error === 'string' && f.url === url && !f.final))
  assert.is(await ctx.t.gateway.webhooks.pending(ctx.device.id), 1)
})

test('Retry-After from the receiver is honoured instead of the (much shorter) schedule', async ctx => {
  await setUp(ctx)
  ctx.receiver.answer((_, index) => (index === 0 ? { status: 503, headers: { 'retry-after': '1' } } : 200))
  await say(ctx, 'devagar')
  await waitFor(() => ctx.delivered.length === 1, 10_000, 'the delivery')
  const [first, second] = ctx.receiver.hooks
  assert.ok(second.at - first.at >= 900, `retried after ${second.at - first.at} ms`)
})

test('410 Gone switches the device webhook off: URL cleared, event dead-lettered, later messages not recorded', async ctx => {
  await setUp(ctx)
  ctx.receiver.answer(() => 410)
  const id = await say(ctx, 'adeus')
  await waitFor(() => ctx.failed.some(f => f.final), 10_000, 'the final failure')
  assert.is(ctx.failed[0].status, 410)
  assert.is(ctx.failed[0].reason, 'gone')
  const status = await ctx.t.post('/api/developer', { authkey: ctx.authkey, message: ctx.device.id, checkDispositivo: 'true' })
  assert.is(status.body.dispositivo.webhook, null)
  const [letter] = await ctx.t.gateway.webhooks.deadLetters()
  assert.is(letter.reason, 'gone')
  assert.is(JSON.parse(letter.body).idMessagem, id)
  await say(ctx, 'ainda aí?')
  assert.is(await ctx.t.gateway.webhooks.pending(), 0)
  assert.is(ctx.receiver.hooks.length, 1)
})

test('an event older than the maximum age moves to the dead letters; redrive delivers it with the same webhook-id', async ctx => {
  await setUp(ctx, { webhookMaxAgeMs: 1_000 })
  ctx.receiver.answer(() => 500)
  await say(ctx, 'tarde demais')
  await waitFor(() => ctx.failed.some(f => f.final), 10_000, 'the final failure')
  const final = ctx.failed.find(f => f.final)!
  assert.is(final.reason, 'max-age')
  assert.ok(final.attempt >= 2, `attempts: ${final.attempt}`)
  assert.is(await ctx.t.gateway.webhooks.pending(), 0)
  const letters = await ctx.t.gateway.webhooks.deadLetters({ deviceId: ctx.device.id })
  assert.is(letters.length, 1)
  assert.is(letters[0].reason, 'max-age')
  assert.is(letters[0].lastStatus, 500)
  assert.is(letters[0].attempts, final.attempt)
  const firstId = ctx.receiver.hooks[0].headers['webhook-id']
  assert.is(letters[0].id, firstId)

  ctx.receiver.answer(() => 200)
  assert.ok(await ctx.t.gateway.webhooks.redrive(letters[0].id))
  await waitFor(() => ctx.delivered.length === 1, 10_000, 'the redriven delivery')
  assert.is(ctx.receiver.hooks.at(-1)!.headers['webhook-id'], firstId)
  assert.equal(await ctx.t.gateway.webhooks.deadLetters(), [])
  assert.not.ok(await ctx.t.gateway.webhooks.redrive(letters[0].id))
})

test('discard(id) deletes a dead letter', async ctx => {
  await setUp(ctx, { webhookMaxAgeMs: 100 })
  ctx.receiver.answer(() => 500)
  await say(ctx, 'descartável')
  await waitFor(() => ctx.failed.some(f => f.final), 10_000, 'the final failure')
  const [letter] = await ctx.t.gateway.webhooks.deadLetters()
  assert.ok(await ctx.t.gateway.webhooks.discard(letter.id))
  assert.not.ok(await ctx.t.gateway.webhooks.discard(letter.id))
  assert.equal(await ctx.t.gateway.webhooks.deadLetters(), [])
})

test('a host listener that throws never breaks delivery', async ctx => {
  await setUp(ctx)
  ctx.t.gateway.events.on('message', () => {
    throw new Error('host bug (message)')
  })
  ctx.t.gateway.events.on('delivery', () => {
    throw new Error('host bug (delivery)')
  })
  ctx.receiver.answer((_, index) => (index === 0 ? 500 : 200))
  ctx.t.gateway.events.on('delivery-failed', () => {
    throw new Error('host bug (delivery-failed)')
  })
  await say(ctx, 'um')
  await say(ctx, 'dois')
  await waitFor(() => ctx.delivered.length === 2, 10_000, 'both deliveries')
  assert.is(ctx.receiver.hooks.length, 3)
  assert.equal([...new Set(ctx.receiver.verified(ctx.device.webhookSecret).map(p => p.text))].sort(), ['dois', 'um'])
})

test('deleting a device drops its pending events instead of delivering them', async ctx => {
  await setUp(ctx)
  await ctx.receiver.stop()
  await say(ctx, 'pendente')
  assert.is(await ctx.t.gateway.webhooks.pending(ctx.device.id), 1)
  const answer = await ctx.t.post('/api/developer', { authkey: ctx.authkey, message: ctx.device.id, apagarDispositivo: 'true' })
  assert.is(answer.status, 200)
  assert.is(await ctx.t.gateway.webhooks.pending(), 0)
})

test('the same message handed over twice is one event (one webhook-id, delivered once)', async ctx => {
  await setUp(ctx)
  ctx.receiver.answer(() => ({ status: 200, delayMs: 200 }))
  const { feed, devices } = internalsOf(ctx.t.gateway)
  const device = (await devices.get(ctx.device.id))!
  const message = {
    id: 'DUP-1',
    chat: FRIEND,
    from: FRIEND,
    to: DEVICE_PHONE,
    fromMe: false,
    isGroup: false,
    timestamp: Date.now(),
    content: { kind: 'text' as const, text: 'eco' },
  }
  await feed.publish(device, message)
  await feed.publish(device, message)
  await waitFor(() => ctx.delivered.length === 1, 10_000, 'the delivery')
  assert.is(await ctx.t.gateway.webhooks.pending(), 0)
  assert.is(ctx.receiver.hooks.length, 1)
})

test('without allowPrivateUrls a loopback receiver is refused when set, and never contacted', async ctx => {
  ctx.receiver = await startReceiver()
  ctx.t = await startGateway({ webhookRetryMs: [30] })
  const { authkey } = await ctx.t.register()
  const qr = await ctx.t.post('/api/v2/qrcode', { authkey, setAppkey: 'private', webhook: ctx.receiver.url })
  assert.equal(qr.body, { status: 400, message: 'Parâmetros inválidos.' })
  const added = await ctx.t.post('/api/developer', {
    authkey,
    message: 'private-2',
    conecteQR: 'true',
    webhook: ctx.receiver.url.replace('127.0.0.1', '[::ffff:127.0.0.1]'),
  })
  assert.equal(added.body, { status: 401, message: 'validation.required' })
  // A URL that slipped in anyway (e.g. stored while allowed) is refused by the default sender at every attempt.
  const failed: Failed[] = []
  ctx.t.gateway.events.on('delivery-failed', e => void failed.push(e))
  const device = await ctx.t.linkedDevice(authkey, 'private-3', DEVICE_PHONE)
  await internalsOf(ctx.t.gateway).devices.update(device.id, d => void (d.webhookUrl = ctx.receiver.url))
  await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'vazamento?' })
  await waitFor(() => failed.length >= 2, 10_000, 'refused attempts')
  assert.match(failed[0].error!, /refused/)
  assert.is(ctx.receiver.hooks.length, 0)
})

test.run()
