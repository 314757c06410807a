import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { FRIEND, assertError, assertOk, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'

const test = suite<{ g: SendingGateway }>('OTP: verificarOTP sent as a JSON number')

test.after.each(async ctx => {
  await ctx.g?.stop()
})

const INVALID = 'OTP inválido ou expirado.'

/** Send codes to FRIEND until one matches `shape` (a code has a leading zero one time in ten); that code. */
async function codeLike(g: SendingGateway, shape: RegExp): Promise<string> {
  for (let i = 0; i < 200; i++) {
    assertOk(await g.send({ to: FRIEND, enviarOTP: 'true' }))
    const texts = g.network.inbox(FRIEND).filter(e => e.type === 'text') as { text: string }[]
    const code = /\b(\d{6})\b/.exec(texts.at(-1)!.text)![1]
    if (shape.test(code)) return code
  }
  throw new Error(`no code like ${shape} in 200 sends`)
}

const verify = (g: SendingGateway, code: unknown) => g.send({ to: FRIEND, message: 'false', verificarOTP: code })

test('a code with a leading zero sent as a JSON number (012345 as 12345) verifies, as a code without one does', async ctx => {
  const g = (ctx.g = await sendingGateway())
  const zero = await codeLike(g, /^0/)
  assert.deepEqual(assertOk(await verify(g, Number(zero))), { status: 200, message: 'OTP válido.', valid: true })
  const plain = await codeLike(g, /^[1-9]/)
  assert.deepEqual(assertOk(await verify(g, Number(plain))), { status: 200, message: 'OTP válido.', valid: true })
})

test('a JSON number is still a wrong code when its digits are not the code: negative, fractional, over 6 digits, or another code', async ctx => {
  const g = (ctx.g = await sendingGateway())
  const code = await codeLike(g, /^0/)
  const n = Number(code)
  for (const wrong of [n === 0 ? -1 : -n, n + 0.5, n + 1_000_000, n === 0 ? 1 : n - 1]) assertError(await verify(g, wrong), 401, INVALID, { valid: false })
  assertOk(await verify(g, code)) // four wrong tries leave the code valid
})

test.run()
