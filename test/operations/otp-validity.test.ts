import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { DEVICE_PHONE, FRIEND, assertError, assertOk, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'
import { formatWallClock } from '../../src/domain/messaging/schedule-time.ts'

/** An OTP's life (docs/limits.md: valid for otpTtlMs; docs/decisions.md: a failed send leaves the code it replaced valid) and operation 17's order. */
const test = suite<{ g: SendingGateway }>('OTP validity and the schedule list')
test.after.each(async ctx => {
  await ctx.g?.stop()
})
const INVALID = 'OTP inválido ou expirado.'
const sleep = (ms: number) => new Promise(r => setTimeout(r, ms))
function lastCode(g: SendingGateway): string {
  const texts = g.network.inbox(FRIEND).filter(e => e.type === 'text') as { text: string }[]
  return /\b(\d{6})\b/.exec(texts.at(-1)?.text ?? '')![1]!
}
const verify = (g: SendingGateway, code: string) => g.send({ to: FRIEND, message: 'false', verificarOTP: code })

test('a new code whose send fails leaves the previous code valid', async ctx => {
  const g = (ctx.g = await sendingGateway())
  assertOk(await g.send({ to: FRIEND, enviarOTP: 'true' }))
  const first = lastCode(g)
  g.network.setFault(DEVICE_PHONE, 'fail')
  const failed = await g.send({ to: FRIEND, enviarOTP: 'true' })
  assert.notEqual(failed.body.status, 200)
  g.network.setFault(DEVICE_PHONE, null)
  assertOk(await verify(g, first))
})

test('a wrong try does not stretch a code past its validity', async ctx => {
  const g = (ctx.g = await sendingGateway({ otpTtlMs: 600 }))
  assertOk(await g.send({ to: FRIEND, enviarOTP: 'true' }))
  const code = lastCode(g)
  await sleep(400)
  assertError(await verify(g, code === '999999' ? '888888' : '999999'), 401, INVALID, { valid: false })
  await sleep(350)
  assertError(await verify(g, code), 401, INVALID, { valid: false })
})

test('operation 17 lists earliest first, whatever the order they were scheduled in', async ctx => {
  const g = (ctx.g = await sendingGateway())
  const later = formatWallClock(Date.now() + 2 * 86_400_000, 'UTC')
  const sooner = formatWallClock(Date.now() + 86_400_000, 'UTC')
  assertOk(await g.send({ to: FRIEND, message: 'depois', agendamento: later }))
  assertOk(await g.send({ to: FRIEND, message: 'antes', agendamento: sooner }))
  const list = assertOk(await g.send({ listaAgendamento: 'true', message: 'false' }))
  assert.deepEqual(
    list.data.map((i: { message: string }) => i.message),
    ['antes', 'depois'],
  )
})
test.run()
