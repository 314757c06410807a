import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { startGateway, type TestGateway } from '../helpers/gateway.ts'
import { assertOk } from '../helpers/messaging.ts'

/**
 * docs/decisions.md: `expiracao` is the last valid day, today + the plan's days in `timeZone`. Days are calendar days:
 * a daylight-saving change in between does not move it (30 times 24 hours from 00:30 the day before clocks go back
 * ends at 23:30 of the 29th day; from 23:30 the day before they go forward, at 00:30 of the 31st).
 */
const test = suite<{ t: TestGateway }>('expiracao across a daylight-saving change')

test.after.each(async ctx => {
  await ctx.t?.stop()
})

/** Register an account with Date.now reading `instant` during the request. */
async function registerAt(t: TestGateway, instant: number, email: string): Promise<string> {
  const real = Date.now
  Date.now = () => instant
  try {
    const answer = await t.post('/api/auth', { auth: 'registrar', nome: 'Ana', email, senha: 'senha-secreta', telefone: '5511999990000', plano: '1' })
    return assertOk(answer).data.expiracao
  } finally {
    Date.now = real
  }
}

test('a 30-day plan registered just before a daylight-saving change ends 30 calendar days later, not a day early or late', async ctx => {
  const t = (ctx.t = await startGateway({ timeZone: 'America/New_York', plans: { '1': { name: 'Mensal', days: 30 } } }))
  // 2026-10-31 00:30 EDT; clocks go back on 2026-11-01.
  assert.equal(await registerAt(t, Date.UTC(2026, 9, 31, 4, 30), 'outono@example.com'), '2026-11-30')
  // 2026-03-07 23:30 EST; clocks go forward on 2026-03-08.
  assert.equal(await registerAt(t, Date.UTC(2026, 2, 8, 4, 30), 'primavera@example.com'), '2026-04-06')
})

test.run()
