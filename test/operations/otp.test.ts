import assert from 'node:assert/strict'
import { suite } from 'uvu'
import type { IncomingMessage } from '../../src/ports/transport.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { DEVICE_PHONE, FRIEND, OTHER, assertError, assertOk, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'

const test = suite<{ g: SendingGateway }>('OTP: enviarOTP and operation 18 (verificarOTP)')

test.after.each(async ctx => {
  await ctx.g?.stop()
})

const INVALID = 'OTP inválido ou expirado.'

/** The code in the last text `phone` received. */
function lastCode(g: SendingGateway, phone = FRIEND): string {
  const texts = g.network.inbox(phone).filter(e => e.type === 'text') as { text: string }[]
  const code = /\b(\d{6})\b/.exec(texts.at(-1)?.text ?? '')?.[1]
  assert.ok(code, 'a 6-digit code was received')
  return code
}

const verify = (g: SendingGateway, code: string, extra: Record<string, unknown> = {}) => g.send({ to: FRIEND, message: 'false', verificarOTP: code, ...extra })

test('enviarOTP sends a 6-digit code through the device and answers the message id', async ctx => {
  const g = (ctx.g = await sendingGateway())
  const body = assertOk(await g.send({ to: `+${FRIEND}`, enviarOTP: 'true' }))
  assert.deepEqual(body, { status: 200, message: 'Código OTP enviado.', id: body.id })
  const [entry] = g.network.inbox(FRIEND) as { id: string; from: string; text: string }[]
  assert.equal(entry.id, body.id)
  assert.equal(entry.from, DEVICE_PHONE)
  assert.match(entry.text, /^Seu código de verificação é \d{6}\. Ele expira em 5 minutos\.$/)
})

test('enviarOTP fills {code} into the message template; a template without {code} is 401', async ctx => {
  const g = (ctx.g = await sendingGateway())
  assertOk(await g.send({ to: FRIEND, enviarOTP: 'true', message: 'Código Loja: {code} (não compartilhe)' }))
  assert.match((g.network.inbox(FRIEND)[0] as { text: string }).text, /^Código Loja: \d{6} \(não compartilhe\)$/)
  assertError(await g.send({ to: FRIEND, enviarOTP: 'true', message: 'sem código' }), 401, 'validation.required')
})

test('verificarOTP accepts the right code once: 200 valid true, then 401 valid false', async ctx => {
  const g = (ctx.g = await sendingGateway())
  assertOk(await g.send({ to: FRIEND, enviarOTP: 'true' }))
  const code = lastCode(g)
  assert.deepEqual(assertOk(await verify(g, code, { to: '+55 11 98888-0002' })), { status: 200, message: 'OTP válido.', valid: true })
  assertError(await verify(g, code), 401, INVALID, { valid: false })
})

test('verificarOTP answers 401 valid false for a wrong code, and after 5 wrong tries the right code fails too', async ctx => {
  const g = (ctx.g = await sendingGateway())
  assertOk(await g.send({ to: FRIEND, enviarOTP: 'true' }))
  const code = lastCode(g)
  const wrong = code === '000000' ? '111111' : '000000'
  for (let i = 0; i < 5; i++) assertError(await verify(g, wrong), 401, INVALID, { valid: false })
  assertError(await verify(g, code), 401, INVALID, { valid: false })
})

test('verificarOTP accepts the right code after 4 wrong tries (at most 5 tries)', async ctx => {
  const g = (ctx.g = await sendingGateway())
  assertOk(await g.send({ to: FRIEND, enviarOTP: 'true' }))
  const code = lastCode(g)
  for (const wrong of ['abc', '12345', '1234567', code === '999999' ? '888888' : '999999']) assertError(await verify(g, wrong), 401, INVALID, { valid: false })
  assertOk(await verify(g, code))
})

test('verificarOTP answers 401 valid false for an expired code', async ctx => {
  const g = (ctx.g = await sendingGateway({ otpTtlMs: 150 }))
  assertOk(await g.send({ to: FRIEND, enviarOTP: 'true' }))
  const code = lastCode(g)
  await new Promise(resolve => setTimeout(resolve, 250))
  assertError(await verify(g, code), 401, INVALID, { valid: false })
})

test('a new code replaces the previous one', async ctx => {
  const g = (ctx.g = await sendingGateway())
  assertOk(await g.send({ to: FRIEND, enviarOTP: 'true' }))
  const first = lastCode(g)
  assertOk(await g.send({ to: FRIEND, enviarOTP: 'true' }))
  const second = lastCode(g)
  if (first !== second) assertError(await verify(g, first), 401, INVALID, { valid: false })
  assertOk(await verify(g, second))
})

test('a code is valid only for its device and recipient', async ctx => {
  const g = (ctx.g = await sendingGateway())
  await g.t.linkedDevice(g.authkey, 'segunda', '5511966660004')
  assertOk(await g.send({ to: FRIEND, enviarOTP: 'true' }))
  const code = lastCode(g)
  assertError(await verify(g, code, { appkey: 'segunda' }), 401, INVALID, { valid: false })
  assertError(await verify(g, code, { to: OTHER }), 401, INVALID, { valid: false })
  assertOk(await verify(g, code))
})

test('codes are stored hashed, never in clear, and never reach the message feed', async ctx => {
  const storage = memoryStorage()
  const g = (ctx.g = await sendingGateway({ storage }))
  const seen: IncomingMessage[] = []
  g.t.gateway.events.on('message', ({ message }) => seen.push(message))
  assertOk(await g.send({ to: FRIEND, enviarOTP: 'true' }))
  const code = lastCode(g)
  let stored = ''
  for await (const [key, value] of storage.list('')) stored += `${key}=${JSON.stringify(value)}\n`
  assert.ok(stored.includes('otp:'), 'an OTP record exists')
  assert.ok(!stored.includes(code), 'the code is not in the store')
  assert.deepEqual(seen, [])
})

test('enviarOTP answers 401 for a group, a missing to or a schedule, 404 for another account and 409 when disconnected', async ctx => {
  const g = (ctx.g = await sendingGateway())
  assertError(await g.send({ to: '120363000000000001@g.us', enviarOTP: 'true' }), 401, 'validation.required')
  assertError(await g.send({ enviarOTP: 'true' }), 401, 'validation.required')
  assertError(await g.send({ to: FRIEND, enviarOTP: 'true', agendamento: '2099-01-01 00:00:00' }), 401, 'validation.required')
  assertError(await g.send({ to: FRIEND, enviarOTP: 'true', authkey: 'nope' }), 401, 'validation.required')
  const other = await g.t.register()
  const { appkey } = await g.t.addDevice(other.authkey, 'outra')
  assertError(await g.send({ to: FRIEND, enviarOTP: 'true', appkey }), 404, 'Nenhum dispositivo encontrado.')
  await g.t.addDevice(g.authkey, 'offline')
  assertError(await g.send({ to: FRIEND, enviarOTP: 'true', appkey: 'offline' }), 409, 'Dispositivo desconectado.')
})

test('verificarOTP answers 401 validation.required with valid false for a missing field, and 404 with valid false for another account', async ctx => {
  const g = (ctx.g = await sendingGateway())
  assertError(await g.send({ message: 'false', verificarOTP: '123456' }), 401, 'validation.required', { valid: false })
  assertError(await g.send({ to: FRIEND, verificarOTP: '123456' }), 401, 'validation.required', { valid: false })
  assertError(await g.send({ to: FRIEND, message: 'true', verificarOTP: '123456' }), 401, 'validation.required', { valid: false })
  assertError(await verify(g, '123456', { authkey: 'nope' }), 401, 'validation.required', { valid: false })
  assertError(await verify(g, '123456', { appkey: undefined }), 401, 'validation.required', { valid: false })
  const other = await g.t.register()
  const { appkey } = await g.t.addDevice(other.authkey, 'outra')
  assertError(await verify(g, '123456', { appkey }), 404, 'Nenhum dispositivo encontrado.', { valid: false })
})

test.run()
