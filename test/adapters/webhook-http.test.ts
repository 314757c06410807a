import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { httpWebhookSender } from '../../adapters/webhook-http/index.ts'
import { startReceiver, type Receiver, type ReceiverAnswer } from '../helpers/receiver.ts'
import { waitFor } from '../helpers/gateway.ts'
import { rejectionOf } from '../helpers/rejection.ts'
import { startGatedReceiver } from './webhook-http-gated-receiver.ts'

interface Context {
  receiver: Receiver
}

const test = suite<Context>('adapters/webhook-http: the default WebhookSender')

test.after.each(async ctx => {
  await ctx.receiver?.stop()
})

const delivery = (url: string, body = '{"event":"Texto"}') => ({
  url,
  body,
  headers: { 'webhook-id': 'msg_1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' },
})

async function receiver(ctx: Context, answer?: (index: number) => ReceiverAnswer): Promise<Receiver> {
  ctx.receiver = await startReceiver(answer ? (_, index) => answer(index) : undefined)
  return ctx.receiver
}

test('send(delivery) POSTs the body and headers once and reports the status and Retry-After', async ctx => {
  const r = await receiver(ctx, () => ({ status: 429, headers: { 'retry-after': '30' } }))
  const sender = httpWebhookSender({ allowPrivateUrls: true })
  const response = await sender.send(delivery(r.url, '{"a":"é"}'))
  assert.equal(response, { status: 429, retryAfter: '30' })
  assert.is(r.hooks.length, 1, 'no retries of its own')
  assert.is(r.hooks[0].body, '{"a":"é"}')
  assert.is(r.hooks[0].headers['webhook-id'], 'msg_1')
  assert.match(r.hooks[0].headers['content-type'], /^application\/json/)
  await sender.close!()
})

test('send(delivery) refuses loopback and private receivers unless allowPrivateUrls', async ctx => {
  const r = await receiver(ctx)
  const sender = httpWebhookSender()
  const port = new URL(r.url).port
  for (const url of [r.url, `http://[::ffff:127.0.0.1]:${port}/hook`, `http://2130706433:${port}/hook`, 'http://10.0.0.1/hook', 'http://localhost/hook']) {
    const err = await rejectionOf(sender.send(delivery(url)), `the send to ${url}`)
    assert.match(err.message, /^webhook URL refused \(/, url)
  }
  assert.is(r.hooks.length, 0)
  await sender.close!()
})

test('send(delivery) does not follow redirects: the 3xx is the answer', async ctx => {
  const target = await startReceiver()
  try {
    const r = await receiver(ctx, () => ({ status: 302, headers: { location: target.url } }))
    const sender = httpWebhookSender({ allowPrivateUrls: true })
    assert.is((await sender.send(delivery(r.url))).status, 302)
    assert.is(target.hooks.length, 0)
    await sender.close!()
  } finally {
    await target.stop()
  }
})

test('send(delivery) throws when the receiver does not answer within timeoutMs', async ctx => {
  // The receiver would answer after 30 s (its timer is cleared when it stops): only a time-out ends the send.
  const r = await receiver(ctx, () => ({ status: 200, delayMs: 30_000 }))
  const sender = httpWebhookSender({ allowPrivateUrls: true, timeoutMs: 200 })
  const err = await rejectionOf(sender.send(delivery(r.url)), 'the send')
  assert.is((err as Error & { code?: string }).code, 'ETIMEDOUT', err.message)
  assert.is(r.hooks.length, 1, 'the request reached the receiver')
  assert.is(r.answered, 0, 'gave up before the receiver answered')
  await sender.close!()
})

/** A receiver answering 200 after `delayMs`; `most()` is the most requests it held at once. */
async function countingReceiver(ctx: Context, delayMs: number) {
  let inFlight = 0
  let most = 0
  const r = await receiver(ctx, () => {
    most = Math.max(most, ++inFlight)
    setTimeout(() => inFlight--, delayMs)
    return { status: 200, delayMs }
  })
  return { r, most: () => most }
}

test('at most concurrencyPerHost deliveries are in flight per receiver host, whichever devices they are for', async ctx => {
  const { r, most } = await countingReceiver(ctx, 150)
  const sender = httpWebhookSender({ allowPrivateUrls: true, concurrencyPerHost: 2 })
  const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => sender.send({ ...delivery(r.url), deviceId: `device-${i % 3}` })))
  assert.equal(
    answers.map(a => a.status),
    [200, 200, 200, 200, 200, 200],
  )
  assert.is(most(), 2)
  await sender.close!()
})

test("one device has at most concurrencyPerDevice deliveries in flight to a host (default half the host's), in the order sent", async ctx => {
  const { r, most } = await countingReceiver(ctx, 100)
  const sender = httpWebhookSender({ allowPrivateUrls: true, concurrencyPerHost: 4 })
  const sends = Array.from({ length: 6 }, (_, i) => sender.send({ ...delivery(r.url), headers: { 'webhook-id': `msg_${i}` }, deviceId: 'device-a' }))
  assert.equal(
    (await Promise.all(sends)).map(a => a.status),
    [200, 200, 200, 200, 200, 200],
  )
  assert.is(most(), 2)
  assert.equal(
    r.hooks.map(hook => hook.headers['webhook-id']),
    ['msg_0', 'msg_1', 'msg_2', 'msg_3', 'msg_4', 'msg_5'],
  )
  await sender.close!()
})

test("a device whose receiver hangs does not hold up another device's deliveries to the same host", async () => {
  const gated = await startGatedReceiver()
  const sender = httpWebhookSender({ allowPrivateUrls: true, concurrencyPerHost: 4, timeoutMs: 5_000 })
  try {
    gated.hold('/a')
    const statusOf = (sending: Promise<{ status: number }>) =>
      sending.then(
        answer => answer.status,
        (error: Error) => error.message,
      )
    const slow = Array.from({ length: 6 }, (_, i) =>
      statusOf(sender.send({ ...delivery(`${gated.origin}/a`), headers: { 'webhook-id': `a_${i}` }, deviceId: 'device-a' })),
    )
    const quick = Array.from({ length: 10 }, (_, i) =>
      statusOf(sender.send({ ...delivery(`${gated.origin}/b`), headers: { 'webhook-id': `b_${i}` }, deviceId: 'device-b' })),
    )
    assert.equal(await Promise.all(quick), Array(10).fill(200))
    assert.is(gated.answered('/a'), 0, "device A's receiver has answered nothing yet")
    await waitFor(() => gated.to('/a').length >= 2, 5_000, "device A's first two deliveries")
    assert.is(gated.to('/a').length, 2, 'device A holds two of the four slots, its other deliveries wait in its own line')
    gated.release('/a')
    assert.equal(await Promise.all(slow), Array(6).fill(200))
    assert.equal(
      gated.to('/a').map(hook => hook.headers['webhook-id']),
      ['a_0', 'a_1', 'a_2', 'a_3', 'a_4', 'a_5'],
    )
  } finally {
    await sender.close!()
    await gated.stop()
  }
})

test('a receiver host with a full queue fails new deliveries at once instead of queueing them', async ctx => {
  const r = await receiver(ctx, () => ({ status: 200, delayMs: 500 }))
  const sender = httpWebhookSender({ allowPrivateUrls: true, concurrencyPerHost: 1, maxQueuedPerHost: 1 })
  const first = sender.send(delivery(r.url))
  const second = sender.send(delivery(r.url))
  await new Promise(resolve => setTimeout(resolve, 50))
  try {
    await sender.send(delivery(r.url))
    assert.unreachable('the third delivery should fail')
  } catch (err) {
    assert.match((err as Error).message, /busy/)
  }
  assert.is(r.answered, 0, 'it failed before the receiver answered anything')
  assert.equal([(await first).status, (await second).status], [200, 200])
  await sender.close!()
})

test('the time-out counts from send(): a delivery still queued at its deadline fails and is never sent later', async ctx => {
  const r = await receiver(ctx, () => ({ status: 200, delayMs: 400 }))
  const sender = httpWebhookSender({ allowPrivateUrls: true, concurrencyPerHost: 1, timeoutMs: 250 })
  const first = sender.send(delivery(r.url))
  const second = sender.send({ ...delivery(r.url), headers: { 'webhook-id': 'msg_2' } })
  const third = sender.send({ ...delivery(r.url), headers: { 'webhook-id': 'msg_3' }, deadline: Date.now() + 100 })
  for (const [name, pending] of [
    ['first', first],
    ['second', second],
    ['third', third],
  ] as const) {
    await pending.then(
      () => assert.unreachable(`the ${name} delivery answered within the time-out`),
      err => assert.match((err as Error).message, /time-?out|timed out/i),
    )
  }
  await new Promise(resolve => setTimeout(resolve, 700))
  assert.equal(
    r.hooks.map(hook => hook.headers['webhook-id']),
    ['msg_1'],
    'the queued deliveries were dropped, not POSTed after the gateway gave up',
  )
  await sender.close!()
})

test("a delivery's signal cancels it while it waits in the queue", async ctx => {
  const r = await receiver(ctx, () => ({ status: 200, delayMs: 300 }))
  const sender = httpWebhookSender({ allowPrivateUrls: true, concurrencyPerHost: 1 })
  const first = sender.send(delivery(r.url))
  const controller = new AbortController()
  const second = sender.send({ ...delivery(r.url), signal: controller.signal })
  controller.abort()
  await second.then(
    () => assert.unreachable('the aborted delivery resolved'),
    () => undefined,
  )
  assert.is((await first).status, 200)
  assert.is(r.hooks.length, 1)
  await sender.close!()
})

test('a huge response body that never ends does not hold the answer back', async () => {
  const sender = httpWebhookSender({ allowPrivateUrls: true })
  const bigServer = await import('node:http').then(
    http =>
      new Promise<import('node:http').Server>(resolve => {
        const server = http.createServer((_, res) => {
          res.writeHead(200)
          res.write(Buffer.alloc(1024 * 1024))
          // never ends: the sender must answer on the status and drop the rest
        })
        server.listen(0, '127.0.0.1', () => resolve(server))
      }),
  )
  try {
    const port = (bigServer.address() as import('node:net').AddressInfo).port
    assert.is((await sender.send(delivery(`http://127.0.0.1:${port}/`))).status, 200)
  } finally {
    bigServer.closeAllConnections()
    bigServer.close()
    await sender.close!()
  }
})

test.run()
