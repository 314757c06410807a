import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { formatWallClock } from '../../src/domain/messaging/schedule-time.ts'
import { internalsOf } from '../../src/internals.ts'
import { startGateway, waitFor, type TestGateway } from '../helpers/gateway.ts'
import { DEVICE_PHONE, FRIEND, assertOk } from '../helpers/messaging.ts'

/**
 * The host suspends an account (billing) or lets it expire: its key is refused, and the messages it
 * scheduled stop too. One falling due then is not sent; it is failed for good, with the reason, and
 * listed `falhou` by operation 17 once the account is back. Once resumed or renewed, its schedules go out again.
 */
const test = suite<{ t: TestGateway }>('scheduled messages of a suspended or expired account are not sent')

test.after.each(async ctx => {
  await ctx.t?.stop()
})

async function setUp(ctx: { t: TestGateway }) {
  const t = (ctx.t = await startGateway())
  const { authkey, email } = await t.register()
  const { appkey, id } = await t.linkedDevice(authkey, 'loja', DEVICE_PHONE)
  const post = (body: Record<string, unknown>) => t.post('/api/create-message', { authkey, appkey, ...body })
  /** Schedule `message` for about a second from now. */
  const schedule = async (message: string) =>
    assertOk(await post({ to: FRIEND, message, agendamento: formatWallClock(Math.ceil((Date.now() + 1000) / 1000) * 1000, 'UTC') }))
  const { messaging, devices } = internalsOf(t.gateway)
  /** The stored items of the device (also while its key is refused). */
  const stored = async () => messaging.scheduler.list((await devices.get(id))!)
  const texts = () => t.network.inbox(FRIEND).map(entry => (entry as { text?: string }).text)
  return { t, email, post, schedule, stored, texts }
}

test('a suspended account: its due message is not sent, failed with the reason; resumed, it sends again', async ctx => {
  const { t, email, post, schedule, stored, texts } = await setUp(ctx)
  const { id } = await schedule('cobrança')
  await t.gateway.accounts.suspend(email)
  await waitFor(async () => (await stored()).some(item => item.state === 'failed'), 5000, 'the due item to be handled')
  const [item] = await stored()
  assert.deepEqual([item.id, item.state, item.lastError], [id, 'failed', 'account suspended or expired'])
  assert.deepEqual(texts(), [], 'nothing reached the phone')
  await t.gateway.accounts.resume(email)
  const listed = assertOk(await post({ listaAgendamento: 'true', message: 'false' })).data
  assert.deepEqual(
    listed.map((i: { id: string; situacao: string }) => [i.id, i.situacao]),
    [[id, 'falhou']],
  )
  await schedule('de volta')
  await waitFor(() => texts().length > 0, 5000, 'the resumed account to send')
  assert.deepEqual(texts(), ['de volta'])
})

test('an expired account: its due message is not sent; renewed, it sends again', async ctx => {
  const { t, email, post, schedule, stored, texts } = await setUp(ctx)
  const { id } = await schedule('vencida')
  // Move the account's last valid day into the past, as time would, by hand in the store.
  const { storage, epoch } = internalsOf(t.gateway)
  for await (const [key, value] of storage.list<{ email: string }>('account:'))
    if (value.email === email) await storage.set(key, { ...value, expiresOn: '2020-01-01' })
  await epoch.bump()
  await waitFor(async () => (await stored()).some(item => item.state === 'failed'), 5000, 'the due item to be handled')
  assert.deepEqual(
    (await stored()).map(item => [item.id, item.state, item.lastError]),
    [[id, 'failed', 'account suspended or expired']],
  )
  assert.deepEqual(texts(), [], 'nothing reached the phone')
  await t.gateway.accounts.renew(email)
  const listed = assertOk(await post({ listaAgendamento: 'true', message: 'false' })).data
  assert.deepEqual(
    listed.map((i: { id: string; situacao: string }) => [i.id, i.situacao]),
    [[id, 'falhou']],
  )
  await schedule('renovada')
  await waitFor(() => texts().length > 0, 5000, 'the renewed account to send')
  assert.deepEqual(texts(), ['renovada'])
})

test.run()
