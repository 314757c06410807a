import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { internalsOf } from '../../src/internals.ts'
import type { ScheduleItem } from '../../src/domain/messaging/schedule-store.ts'
import { FRIEND, assertError, assertOk, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'

const test = suite<{ g: SendingGateway }>('agendamento in an hour repeated by a daylight-saving change')

test.after.each(async ctx => {
  await ctx.g?.stop()
})

/** Run `fn` with Date.now reading `at` (the gateway's clock during one request). */
async function at<T>(instant: number, fn: () => Promise<T>): Promise<T> {
  const real = Date.now
  Date.now = () => instant
  try {
    return await fn()
  } finally {
    Date.now = real
  }
}

test('a time of the repeated hour whose first occurrence is past and second is ahead is the second one, not 401', async ctx => {
  // Australia/Sydney, 2027-04-04: clocks go back from 03:00 AEDT (+11) to 02:00 AEST (+10), so 02:00-03:00 happens twice.
  const g = (ctx.g = await sendingGateway({ timeZone: 'Australia/Sydney', plans: { '1': { name: 'Longo', days: 3650 } } }))
  // Now: 02:30 of the second pass (16:30Z); the client asks for 02:45, a quarter of an hour ahead on every clock in Sydney.
  const now = Date.UTC(2027, 3, 3, 16, 30, 0)
  const answer = await at(now, () => g.send({ to: FRIEND, message: 'daqui a 15 minutos', agendamento: '2027-04-04 02:45:00' }))
  const body = assertOk(answer)
  assert.equal(body.agendamento, '2027-04-04 02:45:00')
  const items: ScheduleItem[] = []
  for await (const [, item] of internalsOf(g.t.gateway).storage.list<ScheduleItem>('schedule:')) items.push(item)
  assert.deepEqual(
    items.map(i => new Date(i.dueAt).toISOString()),
    ['2027-04-03T16:45:00.000Z'],
  )
})

test('while both occurrences are ahead, the first one is taken (as before)', async ctx => {
  const g = (ctx.g = await sendingGateway({ timeZone: 'Australia/Sydney', plans: { '1': { name: 'Longo', days: 3650 } } }))
  const now = Date.UTC(2027, 3, 3, 15, 0, 0) // 02:00 AEDT, the start of the first pass
  assertOk(await at(now, () => g.send({ to: FRIEND, message: 'primeira passagem', agendamento: '2027-04-04 02:45:00' })))
  const items: ScheduleItem[] = []
  for await (const [, item] of internalsOf(g.t.gateway).storage.list<ScheduleItem>('schedule:')) items.push(item)
  assert.deepEqual(
    items.map(i => new Date(i.dueAt).toISOString()),
    ['2027-04-03T15:45:00.000Z'],
  )
})

test('asked during the first pass, a time of the repeated hour already past is refused as past (401), not moved to its second occurrence an hour on', async ctx => {
  const g = (ctx.g = await sendingGateway({ timeZone: 'Australia/Sydney', plans: { '1': { name: 'Longo', days: 3650 } } }))
  // Now: 02:40 AEDT (15:40Z), the first pass; 02:30 was ten minutes ago, and comes again only after the clocks go back (16:30Z).
  const now = Date.UTC(2027, 3, 3, 15, 40, 0)
  assertError(await at(now, () => g.send({ to: FRIEND, message: 'dez minutos atrás', agendamento: '2027-04-04 02:30:00' })), 401, 'validation.required')
  const items: ScheduleItem[] = []
  for await (const [, item] of internalsOf(g.t.gateway).storage.list<ScheduleItem>('schedule:')) items.push(item)
  assert.deepEqual(items, [])
})

test.run()
