import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { NON_HTTP_URLS, PRIVATE_URLS, localServer, type LocalServer } from '../helpers/hostile.ts'
import { FRIEND, assertError, assertOk, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'
import { PNG } from '../helpers/samples.ts'

/**
 * Hostile URLs at the API: the webhook URL of operations 3 and 4, the media `file` of operation 9 and
 * the card `image_url` of operation 16, on a gateway with the default (real) media fetcher.
 */
const test = suite<{ g: SendingGateway; local: LocalServer }>('hostile URLs are refused by default with a clear 4xx')

test.before(async ctx => {
  ctx.g = await sendingGateway()
  ctx.local = await localServer((_, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(PNG))
})
test.after(async ctx => {
  await ctx.g.stop()
  await ctx.local.stop()
})

const REFUSED_MEDIA = 'URL do arquivo não permitida: use http(s) de um endereço público.'
const card = (image_url: string) => ({ image_url, title: 'Pizza', buttons: [{ type: 'quickReplyButton', displaytext: 'Quero', id: 'p' }] })

test('operation 3 answers 400 Parâmetros inválidos. and operation 4 401 validation.required for a private or non-http webhook URL', async ({ g }) => {
  for (const webhook of [...PRIVATE_URLS, ...NON_HTTP_URLS]) {
    assertError(await g.t.post('/api/v2/qrcode', { authkey: g.authkey, setAppkey: 'hook-3', webhook }), 400, 'Parâmetros inválidos.')
    assertError(await g.t.post('/api/developer', { authkey: g.authkey, message: 'hook-4', conecteQR: 'true', webhook }), 401, 'validation.required')
  }
  // Nothing was created on the way.
  assertError(await g.t.post('/api/developer', { authkey: g.authkey, message: 'hook-3', checkDispositivo: 'true' }), 404, 'Nenhum dispositivo encontrado.')
  assertError(await g.t.post('/api/developer', { authkey: g.authkey, message: 'hook-4', checkDispositivo: 'true' }), 404, 'Nenhum dispositivo encontrado.')
})

test('a media file or card image at a private address is 400 URL do arquivo não permitida., a non-http one 401', async ({ g }) => {
  for (const url of PRIVATE_URLS) {
    assertError(await g.send({ to: FRIEND, file: url }), 400, REFUSED_MEDIA)
    assertError(await g.send({ to: FRIEND, message: 'Ofertas', cards: [card(url)] }), 400, REFUSED_MEDIA)
  }
  for (const url of NON_HTTP_URLS) {
    assertError(await g.send({ to: FRIEND, file: url }), 401, 'validation.required')
    assertError(await g.send({ to: FRIEND, message: 'Ofertas', cards: [card(url)] }), 401, 'validation.required')
  }
  assert.deepEqual(g.network.inbox(FRIEND), [])
})

test('a local server is never asked by default, whatever the spelling of its address', async ({ g, local }) => {
  const { port } = local
  for (const host of ['127.0.0.1', '2130706433', '0x7f000001', '127.1', '[::ffff:127.0.0.1]', 'localhost', 'localhost..']) {
    assertError(await g.send({ to: FRIEND, file: `http://${host}:${port}/a.png` }), 400, REFUSED_MEDIA)
    assertError(
      await g.t.post('/api/v2/qrcode', { authkey: g.authkey, setAppkey: 'hook-3', webhook: `http://${host}:${port}/hook` }),
      400,
      'Parâmetros inválidos.',
    )
  }
  assert.deepEqual(local.requests, [])
})

test('a webhook URL no delivery can reach (port 0, in any spelling) is refused, as an empty host is, and nothing is created', async ({ g }) => {
  for (const webhook of ['https://hooks.example.com:0/hook', 'http://hooks.example.com:000/hook', 'http://8.8.8.8:0/', 'http://[2606:4700:4700::1111]:0/']) {
    assertError(await g.t.post('/api/v2/qrcode', { authkey: g.authkey, setAppkey: 'porta-3', webhook }), 400, 'Parâmetros inválidos.')
    assertError(await g.t.post('/api/developer', { authkey: g.authkey, message: 'porta-4', conecteQR: 'true', webhook }), 401, 'validation.required')
  }
  assertError(await g.t.post('/api/developer', { authkey: g.authkey, message: 'porta-3', checkDispositivo: 'true' }), 404, 'Nenhum dispositivo encontrado.')
  assertError(await g.t.post('/api/developer', { authkey: g.authkey, message: 'porta-4', checkDispositivo: 'true' }), 404, 'Nenhum dispositivo encontrado.')
})

test.run()

const optIn = suite('allowPrivateUrls opts in')

optIn('with allowPrivateUrls a local webhook URL, media file and card image are accepted', async () => {
  const g = await sendingGateway({ allowPrivateUrls: true })
  const local = await localServer((_, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(PNG))
  try {
    assertOk(await g.t.post('/api/v2/qrcode', { authkey: g.authkey, setAppkey: 'hook-3', webhook: `${local.url}/hook` }))
    assertOk(await g.send({ to: FRIEND, file: `${local.url}/a.png` }))
    assertOk(await g.send({ to: FRIEND, message: 'Ofertas', cards: [card(`${local.url}/card.png`)] }))
    assert.deepEqual(local.requests, ['/a.png', '/card.png'])
    // Non-http schemes stay refused.
    assertError(await g.send({ to: FRIEND, file: 'file:///etc/passwd' }), 401, 'validation.required')
    assertError(await g.t.post('/api/v2/qrcode', { authkey: g.authkey, setAppkey: 'hook-5', webhook: 'file:///etc/passwd' }), 400, 'Parâmetros inválidos.')
    // So does a URL no delivery can reach.
    assertError(await g.t.post('/api/v2/qrcode', { authkey: g.authkey, setAppkey: 'hook-6', webhook: `http://127.0.0.1:0/hook` }), 400, 'Parâmetros inválidos.')
  } finally {
    await g.stop()
    await local.stop()
  }
})

optIn.run()
