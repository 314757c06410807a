import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { httpWebhookSender } from '../../adapters/webhook-http/index.ts'
import { fakeDns, localServer, redirector, type LocalServer } from '../helpers/hostile.ts'
import { startGateway, waitFor, type TestGateway } from '../helpers/gateway.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

/**
 * The webhook sender refuses private receivers too, whatever the API let through: a delivery to a
 * refused address fails, is retried, and ends in the dead letters; the private server is never
 * reached. As for media, the sender's address policy treats 127.0.0.1 as public and 127.0.0.2 as
 * private, and a fake DNS names them.
 */
type Ctx = { t: TestGateway; receiver: Receiver; secret: LocalServer; hop: LocalServer; authkey: string; failures: Map<string, number> }
const test = suite<Ctx>('webhook deliveries to private receivers fail, are retried and end as dead letters')

const FRIEND = '5511988880002'

test.before(async ctx => {
  ctx.receiver = await startReceiver()
  ctx.secret = await localServer((_, res) => res.writeHead(200).end('ok'), '127.0.0.2')
  ctx.hop = await redirector()
  const webhooks = httpWebhookSender({
    isAllowedAddress: address => address === '127.0.0.1',
    lookup: fakeDns({ 'inside.test': ['127.0.0.2'] }),
    timeoutMs: 2000,
  })
  // allowPrivateUrls lets the API store these local URLs: the sender is what is under test here.
  ctx.t = await startGateway({ allowPrivateUrls: true, webhooks, webhookRetryMs: [50], webhookMaxAgeMs: 600 })
  ctx.authkey = (await ctx.t.register()).authkey
  ctx.failures = new Map()
  ctx.t.gateway.events.on('delivery-failed', ({ deviceId }) => ctx.failures.set(deviceId, (ctx.failures.get(deviceId) ?? 0) + 1))
})
test.after(async ctx => {
  await ctx.t.stop()
  for (const server of [ctx.receiver, ctx.secret, ctx.hop]) await server.stop()
})

/** A linked device with `webhook`, sent one text by FRIEND; resolves with its id. */
async function deviceWithWebhook({ t, authkey }: Ctx, name: string, phone: string, webhook: string): Promise<string> {
  const device = await t.linkedDevice(authkey, name, phone, { webhook })
  await t.network.sendFromPhone(FRIEND, phone, { type: 'text', text: `olá ${name}` })
  return device.id
}

async function deadLetterOf(t: TestGateway, deviceId: string) {
  await waitFor(async () => (await t.gateway.webhooks.deadLetters({ deviceId })).length > 0, 10_000, `a dead letter of ${deviceId}`)
  return (await t.gateway.webhooks.deadLetters({ deviceId }))[0]
}

test('the seam works: a receiver at an allowed address gets its event', async ctx => {
  await deviceWithWebhook(ctx, 'permitido', '5511999990001', ctx.receiver.url)
  const [hook] = await ctx.receiver.waitForHooks(1)
  assert.equal(hook.payload.text, 'olá permitido')
})

test('a literal private receiver is refused on every attempt and ends as a dead letter', async ctx => {
  const id = await deviceWithWebhook(ctx, 'literal', '5511999990002', `${ctx.secret.url}/hook`)
  const letter = await deadLetterOf(ctx.t, id)
  assert.equal(letter.reason, 'max-age')
  assert.ok(letter.attempts >= 2, `${letter.attempts} attempts`)
  assert.match(letter.lastError ?? '', /refused/)
  assert.ok((ctx.failures.get(id) ?? 0) >= 2)
  assert.deepEqual(ctx.secret.requests, [])
})

test('a name resolving to a private address is refused at connect time and ends as a dead letter', async ctx => {
  const id = await deviceWithWebhook(ctx, 'nome', '5511999990003', `http://inside.test:${ctx.secret.port}/hook`)
  const letter = await deadLetterOf(ctx.t, id)
  assert.ok(letter.attempts >= 2, `${letter.attempts} attempts`)
  assert.match(letter.lastError ?? '', /not allowed/)
  assert.deepEqual(ctx.secret.requests, [])
})

test('a receiver redirecting to a private address is not followed: the 3xx is a failure', async ctx => {
  const target = encodeURIComponent(`${ctx.secret.url}/hook`)
  const id = await deviceWithWebhook(ctx, 'redirecionado', '5511999990004', `${ctx.hop.url}/r?status=307&to=${target}`)
  const letter = await deadLetterOf(ctx.t, id)
  assert.equal(letter.lastStatus, 307)
  assert.ok(ctx.hop.requests.length >= 2, 'the redirector was retried')
  assert.deepEqual(ctx.secret.requests, [])
})

test.run()
