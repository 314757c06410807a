import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { gatewayWithDevice, startGateway, type TestGateway } from '../helpers/gateway.ts'
import type { Answer } from '../helpers/http.ts'
import { internalsOf } from '../../src/internals.ts'
import { hashKey } from '../../src/security/keys.ts'

/** Assert the body status, the HTTP code and the exact message. */
function answers(answer: Answer, status: number, message: string) {
  assert.is(answer.body?.status, status, `body status of ${answer.text}`)
  assert.is(answer.status, status, `HTTP code of ${answer.text}`)
  assert.is(answer.body?.message, message)
}

const register = suite<{ t: TestGateway }>('operation 1: register user')
register.before(async ctx => {
  ctx.t = await startGateway({ plans: { '1': { name: 'Gratuito', days: 30 }, pro: { name: 'Pro', days: 365 } } })
})
register.after(ctx => ctx.t.stop())

const valid = { auth: 'registrar', nome: 'Ana Souza', senha: 's3nha-forte', telefone: '+55 (11) 99999-0000', plano: '1' }

register('answers 200 with the account data, the authkey and the expiry date', async ({ t }) => {
  const answer = await t.post('/api/auth', { ...valid, email: 'Ana@Example.com' })
  assert.is(answer.status, 200)
  assert.is(answer.body.status, 200)
  assert.type(answer.body.message, 'string')
  const data = answer.body.data
  assert.is(data.nome, 'Ana Souza')
  assert.is(data.email, 'ana@example.com')
  assert.is(data.telefone, '5511999990000')
  assert.is(data.plano, 'Gratuito')
  assert.match(data.authkey, /^[A-Za-z0-9_-]{32}$/)
  const expected = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10)
  assert.is(data.expiracao, expected)
})

register('a plan id maps to its name and its duration', async ({ t }) => {
  const answer = await t.post('/api/auth', { ...valid, email: 'pro@example.com', plano: 'pro' })
  assert.is(answer.body.data.plano, 'Pro')
  assert.is(answer.body.data.expiracao, new Date(Date.now() + 365 * 86_400_000).toISOString().slice(0, 10))
})

register('answers 409 when the e-mail is taken, whatever its case', async ({ t }) => {
  await t.post('/api/auth', { ...valid, email: 'taken@example.com' })
  answers(await t.post('/api/auth', { ...valid, email: 'TAKEN@example.com' }), 409, 'Usuario ja registrado com este e-mail.')
})

register('an e-mail is one address whatever its Unicode form: composed or decomposed, 409 and the host finds it either way', async ({ t }) => {
  const composed = 'jos\u00e9@example.com' // é as one code point (NFC), as most keyboards type it
  const decomposed = 'jose\u0301@example.com' // e + combining acute (NFD), as macOS and some forms send it
  const first = await t.post('/api/auth', { ...valid, email: decomposed })
  assert.is(first.status, 200, first.text)
  answers(await t.post('/api/auth', { ...valid, email: composed.toUpperCase() }), 409, 'Usuario ja registrado com este e-mail.')
  assert.is((await t.gateway.accounts.get(composed))?.name, 'Ana Souza', 'the host finds the account by the address as its billing wrote it')
  // An address indexed as it came, before addresses were composed, is still found by it (and taken).
  const { storage } = internalsOf(t.gateway)
  const older = 'rene\u0301@example.com'
  await storage.set(`account-email:${hashKey(older)}`, await storage.get(`account-email:${hashKey(composed)}`))
  assert.is((await t.gateway.accounts.get(older))?.name, 'Ana Souza')
  answers(await t.post('/api/auth', { ...valid, email: older }), 409, 'Usuario ja registrado com este e-mail.')
})

register('concurrent registrations of one e-mail create exactly one account', async ({ t }) => {
  const results = await Promise.all(Array.from({ length: 8 }, () => t.post('/api/auth', { ...valid, email: 'race@example.com' })))
  assert.equal(results.map(r => r.status).sort(), [200, 409, 409, 409, 409, 409, 409, 409])
})

register('answers 401 validation.required for each missing required field', async ({ t }) => {
  const full = { ...valid, email: 'missing@example.com' }
  for (const field of Object.keys(full)) {
    const body: Record<string, unknown> = { ...full }
    delete body[field]
    answers(await t.post('/api/auth', body), 401, 'validation.required')
  }
})

register('answers 401 validation.required for invalid fields: auth value, e-mail, phone, short password, unknown plan', async ({ t }) => {
  for (const [field, value] of [
    ['auth', 'login'],
    ['email', 'not-an-email'],
    ['telefone', '12'],
    ['senha', '123'],
    ['plano', '999'],
    ['plano', '__proto__'],
    ['nome', { first: 'Ana' }],
  ] as const) {
    answers(await t.post('/api/auth', { ...valid, email: `bad-${field}@example.com`, [field]: value }), 401, 'validation.required')
  }
})

register('answers 401 validation.required for an e-mail with a control character, and registers nothing', async ({ t }) => {
  for (const email of [
    'ana\u0000@x.com',
    'ana\n@x.com',
    'ana\t@x.com',
    'ana@x\r.com',
    '\u0007ana@x.com',
    'ana@x.com\u0000',
    'ana\u007f@x.com',
    'ana\u0085@x.com',
  ])
    answers(await t.post('/api/auth', { ...valid, email }), 401, 'validation.required')
  assert.is((await t.post('/api/auth', { ...valid, email: 'ana@x.com' })).status, 200, 'the clean address was never taken')
})

register('a rejected registration leaves the e-mail free', async ({ t }) => {
  await t.post('/api/auth', { ...valid, email: 'later@example.com', plano: 'nope' })
  assert.is((await t.post('/api/auth', { ...valid, email: 'later@example.com' })).status, 200)
})

register.run()

const agents = suite<{ t: TestGateway; authkey: string }>('operation 2: create AI agent')
agents.before(async ctx => {
  Object.assign(ctx, await gatewayWithDevice())
})
agents.after(ctx => ctx.t.stop())

agents('answers 200 with the agent id for a device named by name, id or appkey', async ({ t, authkey }) => {
  const device = await t.addDevice(authkey, 'vendas')
  for (const ref of ['vendas', device.id, device.appkey]) {
    const answer = await t.post('/api/v2/ia', { authkey, device: ref, agent_name: 'Atendente' })
    assert.is(answer.status, 200)
    assert.match(answer.body.agent_id, /^[0-9a-f-]{36}$/)
  }
})

agents('answers 401 for an invalid or expired authkey', async ({ t }) => {
  answers(await t.post('/api/v2/ia', { authkey: 'nope', device: 'loja', agent_name: 'x' }), 401, 'Authkey invalida ou expirada.')
})

agents('answers 400 validation.required for each missing parameter', async ({ t, authkey }) => {
  const full = { authkey, device: 'loja', agent_name: 'Atendente' }
  for (const field of Object.keys(full)) {
    const body: Record<string, unknown> = { ...full }
    delete body[field]
    answers(await t.post('/api/v2/ia', body), 400, 'validation.required')
  }
})

agents('answers 404 for a device the account does not have', async ({ t, authkey }) => {
  answers(await t.post('/api/v2/ia', { authkey, device: 'ghost', agent_name: 'x' }), 404, 'Nenhum dispositivo encontrado.')
})

agents.run()

const expiry = suite('expired accounts')

expiry("an expired account's authkey is refused with each operation's own 401", async () => {
  const t = await startGateway({ cacheTtlMs: 100 })
  try {
    const { authkey } = await t.register()
    await t.addDevice(authkey, 'loja')
    // Move the account's last valid day into the past, as time would, by hand in the store: the
    // gateway sees it once its cached copy is older than cacheTtlMs.
    for await (const [key, value] of internalsOf(t.gateway).storage.list<any>('account:')) {
      await internalsOf(t.gateway).storage.set(key, { ...value, expiresOn: '2020-01-01' })
    }
    await new Promise(resolve => setTimeout(resolve, 150))
    answers(await t.post('/api/v2/ia', { authkey, device: 'loja', agent_name: 'x' }), 401, 'Authkey invalida ou expirada.')
    answers(await t.post('/api/v2/qrcode', { authkey }), 401, 'Authkey inválida ou não encontrada.')
    answers(await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' }), 401, 'validation.required')
    answers(await t.post('/api/developer', { authkey, message: 'loja', apagarDispositivo: 'true' }), 401, 'Authkey Invalida')
  } finally {
    await t.stop()
  }
})

expiry.run()
