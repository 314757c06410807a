import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { formatWallClock } from '../../src/domain/messaging/schedule-time.ts'
import { waitFor } from '../helpers/gateway.ts'
import { FRIEND, assertError, assertOk, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'

const test = suite<{ g: SendingGateway }>("an account's schedule quota: pending messages and their bytes")

test.after.each(async ctx => {
  await ctx.g?.stop()
})

const later = (ms: number) => formatWallClock(Math.ceil((Date.now() + ms) / 1000) * 1000, 'UTC')

test('past maxPending scheduled messages the next is 429 with Retry-After and nothing is stored; one sent frees its place', async ctx => {
  const g = (ctx.g = await sendingGateway({ scheduleQuota: { maxPending: 3 }, schedulePollMs: 200 }))
  const soon = later(2_000)
  assertOk(await g.send({ to: FRIEND, message: 'um', agendamento: soon }))
  for (const text of ['dois', 'três']) assertOk(await g.send({ to: FRIEND, message: text, agendamento: later(3_600_000) }))
  const refused = await g.send({ to: FRIEND, message: 'quatro', agendamento: later(3_600_000) })
  assertError(refused, 429, 'Limite da conta atingido. (3 scheduled messages)')
  assert.equal(refused.headers.get('retry-after'), '60')
  assert.equal(assertOk(await g.send({ listaAgendamento: 'true', message: 'false' })).data.length, 3, 'the refused one was not stored')
  await waitFor(() => g.network.inbox(FRIEND).length === 1, 10_000, 'the first to be sent')
  assertOk(await g.send({ to: FRIEND, message: 'quatro', agendamento: later(3_600_000) }))
})

test('past maxBytes of scheduled media the next is 429; sending now is not limited by it', async ctx => {
  const g = (ctx.g = await sendingGateway({ scheduleQuota: { maxBytes: 10_000 } }))
  // A 3 KB PDF: about 4 KB stored (base64) per scheduled copy, so two fit in 10 KB and a third does not.
  const file = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(3_000, 'x')]).toString('base64')
  assertOk(await g.send({ to: FRIEND, file, agendamento: later(3_600_000) }))
  assertOk(await g.send({ to: FRIEND, file, agendamento: later(3_600_000) }))
  const refused = await g.send({ to: FRIEND, file, agendamento: later(3_600_000) })
  assert.equal(refused.status, 429, refused.text)
  assert.equal(refused.body.message, 'Limite da conta atingido. (10 KB of scheduled messages)')
  assertOk(await g.send({ to: FRIEND, file }))
})

test.run()
