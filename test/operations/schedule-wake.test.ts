import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { formatWallClock } from '../../src/domain/messaging/schedule-time.ts'
import { internalsOf } from '../../src/internals.ts'
import { waitFor } from '../helpers/gateway.ts'
import { DEVICE_PHONE, FRIEND, assertOk, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'

/** docs/decisions.md, "Scheduler": a device that connects gets its waiting items at once (those waiting for a retry included). */
const test = suite<{ g: SendingGateway }>('a device that connects gets its scheduled items waiting for a retry at once')

test.after.each(async ctx => {
  await ctx.g?.stop()
})

test('an item whose first attempt failed is sent when its device connects again, not a retry delay later', async ctx => {
  const g = (ctx.g = await sendingGateway({ scheduleRetryMs: [600_000] }))
  g.network.setFault(g.deviceId, 'fail')
  assertOk(await g.send({ to: FRIEND, message: 'depois da falha', agendamento: formatWallClock(Math.ceil((Date.now() + 500) / 1000) * 1000, 'UTC') }))
  const storage = internalsOf(g.t.gateway).storage
  const attempts = async () => {
    for await (const [, item] of storage.list<{ attempts: number }>('schedule:')) return item.attempts
    return -1
  }
  await waitFor(async () => (await attempts()) === 1, 5000, 'the failed first attempt')
  g.network.setFault(g.deviceId, null)
  await g.network.unlink(g.deviceId)
  await g.t.addDevice(g.authkey, 'loja')
  await g.network.scan({ deviceId: g.deviceId }, DEVICE_PHONE)
  await waitFor(() => g.network.inbox(FRIEND).length > 0, 10_000, 'the waiting item sent once the device connected (its retry is 10 minutes away)')
  assert.equal(g.network.inbox(FRIEND).length, 1)
})

test.run()
