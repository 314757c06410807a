import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { formatWallClock } from '../../src/domain/messaging/schedule-time.ts'
import { internalsOf } from '../../src/internals.ts'
import { startGateway, waitFor, type TestGateway } from '../helpers/gateway.ts'
import { DEVICE_PHONE, FRIEND, assertOk } from '../helpers/messaging.ts'

/**
 * docs/api.md: a suspended or expired account sends nothing in its name, its items that fall due meanwhile are not sent
 * but listed `falhou`. An item falling due while its device is away too is one of them: it is not kept waiting for the
 * device, to go out once the account is back and the device connects (a reminder of the unpaid weeks, sent late).
 */
const test = suite<{ t: TestGateway }>('a scheduled message due while its account is suspended and its device away')

test.after.each(async ctx => {
  await ctx.t?.stop()
})

test('it is failed, not sent once the account is resumed and the device connects again', async ctx => {
  const t = (ctx.t = await startGateway())
  const { authkey, email } = await t.register()
  const { appkey, id: deviceId } = await t.linkedDevice(authkey, 'loja', DEVICE_PHONE)
  const post = (body: Record<string, unknown>) => t.post('/api/create-message', { authkey, appkey, ...body })
  const schedule = async (message: string) =>
    assertOk(await post({ to: FRIEND, message, agendamento: formatWallClock(Math.ceil((Date.now() + 1000) / 1000) * 1000, 'UTC') }))
  const { messaging, devices } = internalsOf(t.gateway)
  const stored = async () => messaging.scheduler.list((await devices.get(deviceId))!)
  const texts = () => t.network.inbox(FRIEND).map(entry => (entry as { text?: string }).text)

  const { id } = await schedule('semana em atraso')
  await t.network.unlink(deviceId)
  await t.gateway.accounts.suspend(email)
  await waitFor(async () => (await stored()).some(item => item.state === 'failed'), 5000, 'the item due while suspended to be failed')

  await t.gateway.accounts.resume(email)
  await t.addDevice(authkey, 'loja')
  await t.network.scan({ deviceId }, DEVICE_PHONE)
  await schedule('de volta')
  await waitFor(() => texts().includes('de volta'), 5000, 'the resumed account to send')
  assert.deepEqual(texts(), ['de volta'], 'the item due while suspended never reached the phone')
  const listed = assertOk(await post({ listaAgendamento: 'true', message: 'false' })).data
  assert.deepEqual(
    listed.map((i: { id: string; situacao: string }) => [i.id, i.situacao]),
    [[id, 'falhou']],
  )
})

test.run()
