import assert from 'node:assert/strict'
import Koa from 'koa'
import { suite } from 'uvu'
import { MemoryNetwork, memoryTransport } from '../../adapters/transport-memory/index.ts'
import { createGateway, type RateLimitStore } from '../../src/index.ts'
import { parseRateLimit } from '../../examples/env-config.ts'
import { startGateway, withGateway } from '../helpers/gateway.ts'
import { listen, request, type Answer } from '../helpers/http.ts'
import { FRIEND, assertError, assertOk, sendingGateway } from '../helpers/messaging.ts'

const test = suite('rate limits')

const LIMITED = 'Muitas requisições. Tente novamente mais tarde.'

/** A 429 with the API's message and a Retry-After of 1 to `maxSeconds` seconds. */
function assertLimited(answer: Answer, maxSeconds: number, extra: Record<string, unknown> = {}) {
  assertError(answer, 429, LIMITED, extra)
  const seconds = Number(answer.headers.get('retry-after'))
  assert.ok(Number.isInteger(seconds) && seconds >= 1 && seconds <= maxSeconds, `Retry-After ${answer.headers.get('retry-after')}`)
}

test('requests of one account key past perAccount are 429 with Retry-After; another account is not affected', async () => {
  await withGateway({ rateLimit: { perAccount: { points: 5, duration: 60 } } }, async t => {
    const a = (await t.register()).authkey
    const b = (await t.register()).authkey
    const status = (authkey: string) => t.post('/api/developer', { authkey, message: 'nenhum', checkDispositivo: 'true' })
    for (let i = 0; i < 5; i++) assertError(await status(a), 404, 'Nenhum dispositivo encontrado.')
    assertLimited(await status(a), 60)
    assertLimited(await t.post('/api/create-message', { appkey: 'x', authkey: a, to: FRIEND, message: 'oi' }), 60)
    assertError(await status(b), 404, 'Nenhum dispositivo encontrado.')
  })
})

test('after authFailures wrong authkeys an IP is refused 429 even with a valid key; requests without a key still work', async () => {
  await withGateway({ rateLimit: { authFailures: { points: 3, duration: 600 } } }, async t => {
    const { authkey } = await t.register()
    await t.addDevice(authkey, 'loja')
    assertError(await t.post('/api/developer', { authkey: 'errada-1', message: 'loja', checkDispositivo: 'true' }), 401, 'validation.required')
    assertError(await t.post('/api/v2/ia', { authkey: 'errada-2', device: 'loja', agent_name: 'Bia' }), 401, 'Authkey invalida ou expirada.')
    assertError(await t.post('/api/create-message', { appkey: 'loja', authkey: 'errada-3', to: FRIEND, message: 'false', verificarOTP: '123456' }), 401, 'validation.required', { valid: false })
    assertLimited(await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' }), 600)
    assertLimited(await t.post('/api/v2/qrcode', { authkey: 'errada-4' }), 600)
    // Registration carries no authkey: not refused.
    assertOk(await t.post('/api/auth', { auth: 'registrar', nome: 'Ana', email: 'ana-limite@example.com', senha: 'segredo1', telefone: '5511912345678', plano: '1' }))
  })
})

test('a valid authkey does not count as a failed attempt', async () => {
  await withGateway({ rateLimit: { authFailures: { points: 2, duration: 600 } } }, async t => {
    const { authkey } = await t.register()
    for (let i = 0; i < 5; i++) assertError(await t.post('/api/developer', { authkey, message: 'nenhum', checkDispositivo: 'true' }), 404, 'Nenhum dispositivo encontrado.')
  })
})

test('failed attempts are counted per client IP (X-Forwarded-For behind a trusted proxy)', async () => {
  const gateway = await createGateway({ transport: memoryTransport({ network: new MemoryNetwork() }), rateLimit: { authFailures: { points: 2, duration: 600 } } })
  const app = new Koa({ proxy: true })
  app.use(gateway.routes())
  const server = await listen(app)
  try {
    const from = (ip: string, authkey: string) =>
      request(`${server.url}/api/developer`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': ip }, body: JSON.stringify({ authkey, message: 'x', checkDispositivo: 'true' }) })
    assertError(await from('203.0.113.7', 'errada'), 401, 'validation.required')
    assertError(await from('203.0.113.7', 'errada'), 401, 'validation.required')
    assertLimited(await from('203.0.113.7', 'errada'), 600)
    assertError(await from('198.51.100.9', 'errada'), 401, 'validation.required')
  } finally {
    await server.stop()
    await gateway.close()
  }
})

test('registrations past the limit are 429 whatever the e-mail', async () => {
  await withGateway({ rateLimit: { registrations: { points: 2, duration: 3600 } } }, async t => {
    await t.register()
    await t.register()
    for (const email of ['terceira@example.com', 'quarta@example.com']) {
      assertLimited(await t.post('/api/auth', { auth: 'registrar', nome: 'X', email, senha: 'segredo1', telefone: '5511912345678', plano: '1' }), 3600)
    }
  })
})

test('OTP verifications past the limit are 429 with valid false, even for the right code; other recipients are not affected', async () => {
  const g = await sendingGateway({ rateLimit: { otpVerifications: { points: 3, duration: 900 } } })
  try {
    assertOk(await g.send({ to: FRIEND, enviarOTP: 'true' }))
    const code = /\d{6}/.exec((g.network.inbox(FRIEND).at(-1) as { text: string }).text)![0]
    const verify = (to: string, otp: string) => g.send({ to, message: 'false', verificarOTP: otp })
    for (const wrong of ['000000', '111111', '222222']) assertError(await verify(FRIEND, wrong), 401, 'OTP inválido ou expirado.', { valid: false })
    assertLimited(await verify(FRIEND, code), 900, { valid: false })
    assertError(await verify('5511977770003', '123456'), 401, 'OTP inválido ou expirado.', { valid: false })
  } finally {
    await g.stop()
  }
})

test('rateLimit: false switches every limit off', async () => {
  await withGateway({ rateLimit: false }, async t => {
    for (let i = 0; i < 60; i++) assertError(await t.post('/api/developer', { authkey: `errada-${i}`, message: 'x', checkDispositivo: 'true' }), 401, 'validation.required')
    for (let i = 0; i < 25; i++) await t.register()
  })
})

test('a rate-limit store that fails or hangs lets requests through instead of failing them', async () => {
  for (const behaviour of ['fail', 'hang'] as const) {
    const broken: RateLimitStore = {
      limiter: () => ({
        consume: () => (behaviour === 'fail' ? Promise.reject(new Error('ECONNREFUSED')) : new Promise(() => {})),
        get: () => (behaviour === 'fail' ? Promise.reject(new Error('ECONNREFUSED')) : new Promise(() => {})),
      }),
    }
    const t = await startGateway({ rateLimitStore: broken })
    try {
      const { authkey } = await t.register()
      assertError(await t.post('/api/developer', { authkey, message: 'nenhum', checkDispositivo: 'true' }), 404, 'Nenhum dispositivo encontrado.')
    } finally {
      await t.stop()
    }
  }
})

test('an impossible rule is refused at start with a clear error', async () => {
  await assert.rejects(createGateway({ transport: memoryTransport(), rateLimit: { perAccount: { points: 0, duration: 60 } } }), /rateLimit\.perAccount/)
})

test('parseRateLimit reads off or <points>/<seconds> (GATEWAY_RATE_LIMIT)', () => {
  assert.equal(parseRateLimit('off'), false)
  assert.equal(parseRateLimit(' 0 '), false)
  assert.deepEqual(parseRateLimit('6000/60'), { perAccount: { points: 6000, duration: 60 } })
  for (const bad of ['', 'many', '10/0', '-5/60', '1.5/60']) assert.throws(() => parseRateLimit(bad), /rate limit/)
})

test.run()
