import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { httpMediaFetcher } from '../../adapters/media-http/index.ts'
import { httpWebhookSender } from '../../adapters/webhook-http/index.ts'
import { fakeDns, localServer, type LocalServer } from '../helpers/hostile.ts'
import { waitFor } from '../helpers/gateway.ts'
import { FRIEND, assertError, assertOk, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'
import { PNG } from '../helpers/samples.ts'

/**
 * SECURITY.md: "for a private deployment that needs one internal host, the adapters take
 * `isAllowedAddress` (and `lookup`) instead" of `allowPrivateUrls`. The internal host is reached by
 * its address or by its internal name (`hooks.svc.cluster.local`, `x.internal`, a single label),
 * which the address policy judges after DNS; every other private address stays refused, and so do
 * `localhost` and the cloud metadata names, by name. As in the other security suites, 127.0.0.1 plays
 * the one allowed internal host and 127.0.0.2 any other private address; a fake DNS names them.
 */
type Ctx = { g: SendingGateway; receiver: Receiver; files: LocalServer; secret: LocalServer }
const test = suite<Ctx>('the adapters’ isAllowedAddress seam lets one internal host through, by address and by name')

const dns = fakeDns({
  'hooks.svc.cluster.local': ['127.0.0.1'],
  'hooks.internal': ['127.0.0.1'],
  hooks: ['127.0.0.1'],
  'files.internal': ['127.0.0.1'],
  'vault.internal': ['127.0.0.2'],
  localhost: ['127.0.0.1'],
  'metadata.google.internal': ['127.0.0.1'],
  metadata: ['127.0.0.1'],
})
const allowed = (address: string) => address === '127.0.0.1'
const REFUSED_MEDIA = 'URL do arquivo não permitida: use http(s) de um endereço público.'

test.before(async ctx => {
  ctx.receiver = await startReceiver()
  ctx.files = await localServer((_, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(PNG))
  ctx.secret = await localServer((_, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(PNG), '127.0.0.2')
  const webhooks = httpWebhookSender({ isAllowedAddress: allowed, lookup: dns, timeoutMs: 2000 })
  const media = httpMediaFetcher({ isAllowedAddress: allowed, lookup: dns })
  // No allowPrivateUrls: operations 3 and 4 take a webhook URL by the sender's own policy.
  ctx.g = await sendingGateway({ webhooks, media, webhookRetryMs: [50], webhookMaxAgeMs: 600 })
})
test.after(async ctx => {
  await ctx.g.stop()
  for (const server of [ctx.receiver, ctx.files, ctx.secret]) await server.stop()
})

/** A linked device of `phone` with `webhook`, sent one text by FRIEND; resolves with its id. */
async function deviceWithWebhook({ g }: Ctx, name: string, phone: string, webhook: string): Promise<string> {
  const device = await g.t.linkedDevice(g.authkey, name, phone, { webhook })
  await g.t.network.sendFromPhone(FRIEND, phone, { type: 'text', text: `olá ${name}` })
  return device.id
}

test('operations 3 and 4 take a receiver at the allowed address, by address and by name, and it gets its webhook', async ctx => {
  const { g, receiver } = ctx
  const before = receiver.hooks.length
  await deviceWithWebhook(ctx, 'literal', '5511999991010', receiver.url) // operation 3
  const webhook = `http://hooks.internal:${new URL(receiver.url).port}/hook`
  const linked = assertOk(await g.t.post('/api/developer', { authkey: g.authkey, message: 'nomeado', conecteQR: 'true', webhook })) // operation 4
  await g.t.network.scan({ deviceId: linked.id }, '5511999991011')
  await waitFor(
    async () => (await g.t.post('/api/developer', { authkey: g.authkey, message: 'nomeado', checkDispositivo: 'true' })).body?.dispositivo?.conectado === true,
  )
  await g.t.network.sendFromPhone(FRIEND, '5511999991011', { type: 'text', text: 'olá nomeado' })
  const hooks = await receiver.waitForHooks(before + 2)
  assert.deepEqual(
    hooks
      .slice(before)
      .map(hook => hook.payload.text)
      .sort(),
    ['olá literal', 'olá nomeado'],
  )
})

test('operations 3 and 4 still refuse every other private address, localhost and the metadata services', async ({ g, secret, receiver }) => {
  const port = new URL(receiver.url).port
  for (const url of [
    `http://127.0.0.2:${secret.port}/hook`,
    'http://10.0.0.1/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00:ec2::254]/latest/meta-data/',
    `http://localhost:${port}/hook`,
    `http://metadata.google.internal:${port}/hook`,
    'ftp://hooks.internal/hook',
  ]) {
    assertError(await g.t.post('/api/v2/qrcode', { authkey: g.authkey, setAppkey: 'recusado-3', webhook: url }), 400, 'Parâmetros inválidos.')
    assertError(await g.t.post('/api/developer', { authkey: g.authkey, message: 'recusado-4', conecteQR: 'true', webhook: url }), 401, 'validation.required')
  }
})

test('a receiver named by an internal name that resolves to the allowed address gets its webhook', async ctx => {
  const port = new URL(ctx.receiver.url).port
  const before = ctx.receiver.hooks.length
  const names = ['hooks.svc.cluster.local', 'hooks.internal', 'hooks']
  for (const [i, name] of names.entries()) await deviceWithWebhook(ctx, `nome-${i}`, `551199999100${i}`, `http://${name}:${port}/hook`)
  const hooks = await ctx.receiver.waitForHooks(before + names.length)
  assert.deepEqual(
    hooks
      .slice(before)
      .map(hook => hook.payload.text)
      .sort(),
    names.map((_, i) => `olá nome-${i}`).sort(),
  )
})

test('a media file at an internal name that resolves to the allowed address is fetched', async ({ g, files }) => {
  assertOk(await g.send({ to: FRIEND, file: `http://files.internal:${files.port}/a.png` }))
  assert.deepEqual(files.requests, ['/a.png'])
})

test('an internal name resolving to another private address is refused at connect time', async ctx => {
  const { g, secret } = ctx
  assertError(await g.send({ to: FRIEND, file: `http://vault.internal:${secret.port}/a.png` }), 400, REFUSED_MEDIA)
  const id = await deviceWithWebhook(ctx, 'cofre', '5511999991009', `http://vault.internal:${secret.port}/hook`)
  await waitFor(async () => (await g.t.gateway.webhooks.deadLetters({ deviceId: id })).length > 0, 10_000, 'a dead letter')
  const [letter] = await g.t.gateway.webhooks.deadLetters({ deviceId: id })
  assert.match(letter.lastError ?? '', /not allowed/)
  assert.deepEqual(secret.requests, [])
})

test('localhost and the cloud metadata names stay refused by name, before any DNS, whatever the seam allows', async ({ g, files }) => {
  const asked = dns.asked.length
  for (const host of ['localhost', 'app.localhost', 'metadata.google.internal', 'metadata', 'METADATA.GOOGLE.INTERNAL.'])
    assertError(await g.send({ to: FRIEND, file: `http://${host}:${files.port}/m.png` }), 400, REFUSED_MEDIA)
  assert.deepEqual(dns.asked.slice(asked), [])
  assert.deepEqual(
    files.requests.filter(path => path === '/m.png'),
    [],
  )
})

test.run()
