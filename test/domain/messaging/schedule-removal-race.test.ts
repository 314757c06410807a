import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { formatWallClock } from '../../../src/domain/messaging/schedule-time.ts'
import { OTHER } from '../../helpers/messaging.ts'
import { pausingStore, type PausingStore } from '../../helpers/pausing-storage.ts'
import { receiverWorld, stopReceiverWorld, type ReceiverWorld } from '../../helpers/receiver.ts'

/**
 * A scheduled send (operations 8 to 16 with `agendamento`) while operation 6 deletes its device: whichever
 * step lands first, the schedule does not outlive the device, nor keep its place in the account's quota.
 * Before, one created while the deletion ran its removal hooks, or whose record was still being stored
 * (marked `opening`, which the removal skips) when they listed the device's schedules, stayed stored and
 * counted, and the send answered 200 with its id.
 */
type World = ReceiverWorld & { store: PausingStore }
const test = suite<Partial<World>>('schedules: a device deleted while a message is scheduled on it')

test.after.each(stopReceiverWorld)

// One scheduled message per account: a place left taken refuses the next one, on any device.
async function setUp(context: Partial<World>): Promise<World> {
  context.store = pausingStore()
  Object.assign(context, await receiverWorld('loja', { storage: context.store.storage, scheduleQuota: { maxPending: 1 } }))
  return context as World
}

const inAnHour = () => formatWallClock(Math.ceil((Date.now() + 3_600_000) / 1000) * 1000, 'UTC')
const schedule = (ctx: World, appkey: string) =>
  ctx.t.post('/api/create-message', { appkey, authkey: ctx.authkey, to: OTHER, message: 'mais tarde', agendamento: inAnHour() })
const deleteDevice = (ctx: World) => ctx.t.post('/api/developer', { authkey: ctx.authkey, message: 'loja', apagarDispositivo: 'true' })

// What the user relies on afterwards: nothing of the schedule stored, and its place free for another device of the account.
async function assertTakenBack(ctx: World, scheduled: { status: number; body: any }) {
  assert.equal([scheduled.status, scheduled.body.message], [404, 'Nenhum dispositivo encontrado.'])
  assert.equal(await ctx.store.keys('schedule'), [])
  const other = await ctx.t.linkedDevice(ctx.authkey, 'caixa', '5511966660004')
  const next = await schedule(ctx, other.appkey)
  assert.is(next.status, 200, next.text)
}

test('scheduled while the deletion runs its removal hooks: 404, nothing stored, the quota place free', async context => {
  const ctx = await setUp(context)
  const hold = ctx.store.pause('delete', `device:${ctx.device.id}`) // the device record's own deletion, after the hooks
  const deleting = deleteDevice(ctx)
  await hold.reached
  const scheduled = await schedule(ctx, ctx.device.appkey)
  hold.release()
  assert.is((await deleting).status, 200)
  await assertTakenBack(ctx, scheduled)
})

test('scheduled with its action still being stored when the removal hooks list the schedules: 404, nothing stored, the quota place free', async context => {
  const ctx = await setUp(context)
  const hold = ctx.store.pause('set', 'schedule-body:') // the record is stored `opening` and counted; its action not yet
  const scheduling = schedule(ctx, ctx.device.appkey)
  await hold.reached
  assert.is((await deleteDevice(ctx)).status, 200)
  hold.release()
  await assertTakenBack(ctx, await scheduling)
})

test('scheduled with its record landing after the whole deletion: 404, nothing stored, the quota place free', async context => {
  const ctx = await setUp(context)
  const hold = ctx.store.pause('set', 'schedule:')
  const scheduling = schedule(ctx, ctx.device.appkey)
  await hold.reached
  assert.is((await deleteDevice(ctx)).status, 200)
  hold.release()
  await assertTakenBack(ctx, await scheduling)
})

test('scheduled with its record landing after the removal hooks, while the device is still being deleted (its record not yet removed): 404, nothing stored, the quota place free', async context => {
  const ctx = await setUp(context)
  const storing = ctx.store.pause('set', 'schedule:') // the request is past authentication, its item not yet stored
  const scheduling = schedule(ctx, ctx.device.appkey)
  await storing.reached
  const removing = ctx.store.pause('delete', `device:${ctx.device.id}`) // the device marked, its hooks done (no schedule of it listed), its record still there
  const deleting = deleteDevice(ctx)
  await removing.reached
  storing.release()
  const scheduled = await scheduling
  removing.release()
  assert.is((await deleting).status, 200)
  await assertTakenBack(ctx, scheduled)
})

test.run()
