import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startGateway, waitFor, type TestGateway } from '../helpers/gateway.ts'
import type { Answer } from '../helpers/http.ts'
import { internalsOf } from '../../src/internals.ts'

function answers(answer: Answer, status: number, message: string) {
  assert.is(answer.body?.status, status, `body status of ${answer.text}`)
  assert.is(answer.status, status, `HTTP code of ${answer.text}`)
  assert.is(answer.body?.message, message)
}

/** Run `body` while the gateway transport's `method` fails (network down); the method is put back after. */
async function whileFailing(t: TestGateway, method: 'link' | 'logout', body: () => Promise<void>): Promise<void> {
  const transport = internalsOf(t.gateway).transport
  const original = transport[method]
  Object.assign(transport, {
    [method]: async () => {
      throw new Error('network down')
    },
  })
  try {
    await body()
  } finally {
    Object.assign(transport, { [method]: original })
  }
}

type Ctx = { t: TestGateway; authkey: string }
const setup = async (ctx: Ctx) => {
  ctx.t = await startGateway()
  ctx.authkey = (await ctx.t.register()).authkey
}

// --- Operation 3 ---------------------------------------------------------------------------

const qrcode = suite<Ctx>('operation 3: QR code or pairing code')
qrcode.before(setup)
qrcode.after(ctx => ctx.t.stop())

qrcode('without phone answers a PNG data URI QR, the appkey, a share link and the webhook secret', async ({ t, authkey }) => {
  const answer = await t.post('/api/v2/qrcode', { authkey, webhook: 'https://hooks.example.com/zap' })
  assert.is(answer.status, 200)
  assert.match(answer.body.qrcode, /^data:image\/png;base64,[A-Za-z0-9+/=]+$/)
  assert.match(answer.body.appkey, /^[A-Za-z0-9_-]{24}$/)
  assert.match(answer.body.link, new RegExp(`^${t.url}/qr/[A-Za-z0-9_-]+$`))
  assert.match(answer.body.webhookSecret, /^whsec_[A-Za-z0-9+/=]+$/)
  const status = await t.post('/api/developer', { authkey, message: answer.body.appkey, checkDispositivo: 'true' })
  assert.is(status.body.dispositivo.webhook, 'https://hooks.example.com/zap')
  assert.is(status.body.dispositivo.conectado, false)
})

qrcode('with phone answers an 8-digit pairing code that links the device when entered on that phone', async ({ t, authkey }) => {
  const answer = await t.post('/api/v2/qrcode', { authkey, setAppkey: 'pareado', phone: '+55 11 98888-7777' })
  assert.is(answer.status, 200)
  assert.match(answer.body.code, /^[1-9]{8}$/)
  assert.is(answer.body.appkey, 'pareado')
  assert.is(answer.body.qrcode, undefined)
  await t.network.scan({ code: answer.body.code }, '5511988887777')
  await waitFor(async () => (await t.post('/api/developer', { authkey, message: 'pareado', checkDispositivo: 1 })).body.dispositivo.conectado)
  const status = await t.post('/api/developer', { authkey, message: 'pareado', checkDispositivo: 1 })
  assert.is(status.body.dispositivo.telefone, '5511988887777')
})

qrcode('setAppkey names the device and is its appkey; asking again returns a fresh QR for the same device', async ({ t, authkey }) => {
  const first = await t.post('/api/v2/qrcode', { authkey, setAppkey: 'minha-loja' })
  const second = await t.post('/api/v2/qrcode', { authkey, setAppkey: 'minha-loja' })
  assert.is(first.body.appkey, 'minha-loja')
  assert.is(second.body.id, first.body.id)
  assert.is.not(second.body.qrcode, first.body.qrcode)
})

qrcode('answers 409 for a device that is already connected', async ({ t, authkey }) => {
  await t.linkedDevice(authkey, 'ligado', '5511977776666')
  answers(await t.post('/api/v2/qrcode', { authkey, setAppkey: 'ligado' }), 409, 'Dispositivo já conectado.')
})

qrcode('answers 401 for a missing, unknown or expired authkey', async ({ t }) => {
  answers(await t.post('/api/v2/qrcode', {}), 401, 'Authkey inválida ou não encontrada.')
  answers(await t.post('/api/v2/qrcode', { authkey: 'nope' }), 401, 'Authkey inválida ou não encontrada.')
})

qrcode('answers 400 for invalid parameters: phone, webhook URL, private webhook, over-long setAppkey', async ({ t, authkey }) => {
  for (const body of [
    { phone: '12' },
    { phone: 'abc' },
    { webhook: 'not a url' },
    { webhook: 'ftp://example.com/x' },
    { webhook: 'http://127.0.0.1:9000/hook' },
    { webhook: 'http://169.254.169.254/' },
    { setAppkey: 'x'.repeat(65) },
    { setAppkey: { nested: true } },
  ])
    answers(await t.post('/api/v2/qrcode', { authkey, ...body }), 400, 'Parâmetros inválidos.')
})

qrcode('setAppkey and phone sent as null are absent, as every optional field (docs/decisions.md): a QR for a generated device', async ({ t, authkey }) => {
  const answer = await t.post('/api/v2/qrcode', { authkey, setAppkey: null, phone: null, webhook: null })
  answers(answer, 200, 'QR code gerado.')
  assert.match(answer.body.qrcode, /^data:image\/png;base64,/)
  assert.match(answer.body.appkey, /^[A-Za-z0-9_-]{24}$/)
  const named = await t.post('/api/v2/qrcode', { authkey, setAppkey: 'com-nulo', phone: null })
  answers(named, 200, 'QR code gerado.')
  assert.is(named.body.appkey, 'com-nulo')
})

qrcode.run()

// --- Operation 4 ---------------------------------------------------------------------------

const add = suite<Ctx>('operation 4: add device')
add.before(setup)
add.after(ctx => ctx.t.stop())

add('answers 200 with a QR data URI, the device id, appkey, share link and webhook secret', async ({ t, authkey }) => {
  const answer = await t.post('/api/developer', { authkey, message: 'recepcao', conecteQR: 'true', webhook: 'https://hooks.example.com/a' })
  assert.is(answer.status, 200)
  assert.match(answer.body.qrcode, /^data:image\/png;base64,/)
  assert.match(answer.body.id, /^[0-9a-f-]{36}$/)
  assert.match(answer.body.appkey, /^[A-Za-z0-9_-]{24}$/)
  assert.match(answer.body.link, /\/qr\//)
  assert.match(answer.body.webhookSecret, /^whsec_/)
  // The random appkey and the name both find the device.
  for (const ref of [answer.body.appkey, 'recepcao', answer.body.id])
    assert.is((await t.post('/api/developer', { authkey, message: ref, checkDispositivo: 'true' })).body.dispositivo.id, answer.body.id)
})

add('answers 401 validation.required for a missing field, a conecteQR that is not true, or an unknown authkey', async ({ t, authkey }) => {
  answers(await t.post('/api/developer', { authkey, conecteQR: 'true' }), 401, 'validation.required')
  answers(await t.post('/api/developer', { message: 'x', conecteQR: 'true' }), 401, 'validation.required')
  answers(await t.post('/api/developer', { authkey, message: 'x', conecteQR: 'false' }), 401, 'validation.required')
  answers(await t.post('/api/developer', { authkey: 'nope', message: 'x', conecteQR: 'true' }), 401, 'validation.required')
  answers(await t.post('/api/developer', { authkey, message: 'x', conecteQR: 'true', webhook: 'http://10.0.0.1/' }), 401, 'validation.required')
})

add('answers 401 validation.required when no distinguishing field is present', async ({ t, authkey }) => {
  answers(await t.post('/api/developer', { authkey, message: 'x' }), 401, 'validation.required')
  answers(await t.post('/api/developer', {}), 401, 'validation.required')
})

add('answers 404 when the network fails to start the link', async ({ t, authkey }) => {
  await whileFailing(t, 'link', async () => {
    answers(await t.post('/api/developer', { authkey, message: 'falha', conecteQR: 'true' }), 404, 'Erro ao adicionar dispositivo.')
  })
})

add.run()

// --- Operations 5, 6, 7 ----------------------------------------------------------------------

const manage = suite<Ctx>('operations 5, 6 and 7: status, delete, revoke share link')
manage.before(setup)
manage.after(ctx => ctx.t.stop())

manage('operation 5 reports a linked device as connected with its phone', async ({ t, authkey }) => {
  const device = await t.linkedDevice(authkey, 'balcao', '5511966665555', { webhook: 'https://hooks.example.com/b' })
  const answer = await t.post('/api/developer', { authkey, message: device.id, checkDispositivo: 'true' })
  assert.is(answer.status, 200)
  assert.equal(answer.body.dispositivo, {
    id: device.id,
    nome: 'balcao',
    telefone: '5511966665555',
    webhook: 'https://hooks.example.com/b',
    conectado: true,
    estado: 'open',
    webhookSecret: device.webhookSecret,
  })
})

manage(
  'operation 5 shows no telefone once the phone has unlinked the device, nor while it is linked anew, until the new phone links it',
  async ({ t, authkey }) => {
    const device = await t.linkedDevice(authkey, 'desligado', '5511966664444')
    const shown = async () => (await t.post('/api/developer', { authkey, message: 'desligado', checkDispositivo: 'true' })).body.dispositivo
    await t.network.unlink(device.id)
    await waitFor(async () => (await shown()).estado === 'logged-out')
    assert.equal([(await shown()).conectado, (await shown()).telefone], [false, null], 'logged out: no phone is linked')
    assert.is((await t.post('/api/v2/qrcode', { authkey, setAppkey: 'desligado' })).status, 200)
    assert.equal([(await shown()).estado, (await shown()).telefone], ['linking', null], 'linking anew: still none')
    await t.network.scan({ deviceId: device.id }, '5511955553333')
    await waitFor(async () => (await shown()).conectado === true)
    assert.is((await shown()).telefone, '5511955553333')
  },
)
manage('operation 5 answers 404 for an unknown device and 401 for a missing field', async ({ t, authkey }) => {
  answers(await t.post('/api/developer', { authkey, message: 'ghost', checkDispositivo: 'true' }), 404, 'Nenhum dispositivo encontrado.')
  answers(await t.post('/api/developer', { authkey, checkDispositivo: 'true' }), 401, 'validation.required')
  answers(await t.post('/api/developer', { authkey: 'nope', message: 'x', checkDispositivo: 'true' }), 401, 'validation.required')
})

manage('operation 6 logs the session out of the network and removes the device', async ({ t, authkey }) => {
  const device = await t.linkedDevice(authkey, 'apagar', '5511955554444')
  const answer = await t.post('/api/developer', { authkey, message: 'apagar', apagarDispositivo: 'true' })
  assert.is(answer.status, 200)
  assert.is(answer.body.message, 'Dispositivo excluído com sucesso.')
  assert.is(t.network.linkedPhone(device.id), undefined)
  answers(await t.post('/api/developer', { authkey, message: device.id, checkDispositivo: 'true' }), 404, 'Nenhum dispositivo encontrado.')
  answers(await t.post('/api/developer', { authkey, message: 'apagar', apagarDispositivo: 'true' }), 404, 'Nenhum dispositivo encontrado.')
})

manage('operation 6 keeps the appkey reserved unless apagarAppkey; setAppkey brings it back', async ({ t, authkey }) => {
  const kept = await t.addDevice(authkey, 'volta')
  await t.post('/api/developer', { authkey, message: 'volta', apagarDispositivo: 'true' })
  const again = await t.post('/api/v2/qrcode', { authkey, setAppkey: 'volta' })
  assert.is(again.status, 200)
  assert.is.not(again.body.id, kept.id)
  const gone = await t.post('/api/developer', { authkey, message: 'volta', apagarDispositivo: 'true', apagarAppkey: 'true' })
  assert.is(gone.status, 200)
  answers(await t.post('/api/developer', { authkey, message: 'volta', checkDispositivo: 'true' }), 404, 'Nenhum dispositivo encontrado.')
})

manage('operation 6 answers 401 Authkey Invalida for an unknown authkey, 401 validation.required for a missing or invalid field', async ({ t, authkey }) => {
  answers(await t.post('/api/developer', { authkey: 'nope', message: 'x', apagarDispositivo: 'true' }), 401, 'Authkey Invalida')
  for (const body of [{ message: 'loja' }, { authkey: ' ', message: 'loja' }, { authkey }, { authkey, message: 'loja', apagarAppkey: 'sim' }])
    answers(await t.post('/api/developer', { ...body, apagarDispositivo: 'true' }), 401, 'validation.required')
})

manage('operation 6 answers 500 and keeps the device when the network logout fails', async ({ t, authkey }) => {
  const device = await t.addDevice(authkey, 'teimoso')
  await whileFailing(t, 'logout', async () => {
    answers(await t.post('/api/developer', { authkey, message: 'teimoso', apagarDispositivo: 'true' }), 500, 'Ocorreu um erro ao excluir o dispositivo.')
  })
  assert.is((await t.post('/api/developer', { authkey, message: device.id, checkDispositivo: 'true' })).status, 200)
})

manage('operation 7 revokes the share links: the page answers 404 afterwards', async ({ t, authkey }) => {
  const device = await t.addDevice(authkey, 'vitrine')
  const link = device.answer.body.link as string
  assert.is((await fetch(link)).status, 200)
  const answer = await t.post('/api/developer', { authkey, appkey: 'vitrine', message: 'false', to: device.id, GerenciarLinks: 'excluir' })
  assert.is(answer.status, 200)
  assert.is((await fetch(link)).status, 404)
  assert.is((await fetch(`${link}/state`)).status, 404)
})

manage('operation 7 answers 404 for an unknown device or a to that names another device', async ({ t, authkey }) => {
  await t.addDevice(authkey, 'outro')
  answers(
    await t.post('/api/developer', { authkey, appkey: 'ghost', message: 'false', to: 'ghost', GerenciarLinks: 'excluir' }),
    404,
    'Nenhum dispositivo encontrado.',
  )
  answers(
    await t.post('/api/developer', { authkey, appkey: 'outro', message: 'false', to: 'ghost', GerenciarLinks: 'excluir' }),
    404,
    'Nenhum dispositivo encontrado.',
  )
})

manage('operation 7 answers 401 validation.required for missing fields, message not false, or another action', async ({ t, authkey }) => {
  const full = { authkey, appkey: 'outro', message: 'false', to: 'outro', GerenciarLinks: 'excluir' }
  for (const field of ['authkey', 'appkey', 'message', 'to']) {
    const body: Record<string, unknown> = { ...full }
    delete body[field]
    answers(await t.post('/api/developer', body), 401, 'validation.required')
  }
  answers(await t.post('/api/developer', { ...full, message: 'true' }), 401, 'validation.required')
  answers(await t.post('/api/developer', { ...full, GerenciarLinks: 'criar' }), 401, 'validation.required')
  answers(await t.post('/api/developer', { ...full, authkey: 'nope' }), 401, 'validation.required')
})

manage.run()
