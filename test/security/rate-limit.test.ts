import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { memoryTransport } from '../../adapters/transport-memory/index.ts'
import { createGateway } from '../../src/index.ts'
import { parseRateLimit } from '../../examples/env-config.ts'
import { withGateway } from '../helpers/gateway.ts'
import { assertLimited } from '../helpers/rate-limit.ts'
import { FRIEND, assertError, assertOk, sendingGateway } from '../helpers/messaging.ts'

const test = suite('rate limits')

test('requests of one account key past perAccount are 429 with Retry-After; another account is not affected', async () => {
  // An hour's window: windows are fixed (offset by the counter's key), so the six requests all fall in one but once in thousands of runs.
  await withGateway({ rateLimit: { perAccount: { points: 5, duration: 3600 } } }, async t => {
    const a = (await t.register()).authkey
    const b = (await t.register()).authkey
    const status = (authkey: string) => t.post('/api/developer', { authkey, message: 'nenhum', checkDispositivo: 'true' })
    for (let i = 0; i < 5; i++) assertError(await status(a), 404, 'Nenhum dispositivo encontrado.')
    assertLimited(await status(a), 3600)
    assertLimited(await t.post('/api/create-message', { appkey: 'x', authkey: a, to: FRIEND, message: 'oi' }), 3600)
    assertError(await status(b), 404, 'Nenhum dispositivo encontrado.')
  })
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

test('an OTP verification refused by the account key limit (before the operation runs) is 429 with valid false too', async () => {
  // An hour's window (fixed windows): the 21 requests and the one after the first 429 fall in one but once in thousands of runs.
  const g = await sendingGateway({ rateLimit: { perAccount: { points: 20, duration: 3600 }, otpVerifications: false } })
  try {
    const verify = () => g.send({ to: FRIEND, message: 'false', verificarOTP: '123456' })
    while ((await verify()).body.status !== 429) {}
    assertLimited(await verify(), 3600, { valid: false })
  } finally {
    await g.stop()
  }
})

test('rateLimit: false switches every limit off', async () => {
  await withGateway({ rateLimit: false }, async t => {
    for (let i = 0; i < 60; i++)
      assertError(await t.post('/api/developer', { authkey: `errada-${i}`, message: 'x', checkDispositivo: 'true' }), 401, 'validation.required')
    for (let i = 0; i < 25; i++) await t.register()
  })
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
