import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { DEVICE_PHONE, FRIEND } from '../helpers/messaging.ts'
import { pausingStore, type PausingStore } from '../helpers/pausing-storage.ts'
import { receiverWorld, stopReceiverWorld, type ReceiverWorld } from '../helpers/receiver.ts'

/**
 * Operation 2 (create an agent) or an agent's answer under way while operation 6 deletes the device:
 * whichever step lands first, nothing of the agent outlives the device. Before, an agent created while
 * the deletion ran its removal hooks (which saw the device's agents as they were when the request read
 * it), or between the agent's record and its entry in the device, stayed stored for good, and op 2
 * answered 200 with its id; an answer's flow record written after the deletion listed the device's
 * flows stayed 30 days.
 */
const test = suite<Partial<ReceiverWorld> & { store: PausingStore }>('agents: a device deleted while an agent is created or answering')

test.after.each(stopReceiverWorld)

async function setUp(ctx: Partial<ReceiverWorld> & { store: PausingStore }, agentResponder?: (request: { text: string }) => Promise<string>) {
  ctx.store = pausingStore()
  Object.assign(ctx, await receiverWorld('loja', { storage: ctx.store.storage, ...(agentResponder ? { agentResponder } : {}) }))
  return ctx as ReceiverWorld & { store: PausingStore }
}

const deleteDevice = (ctx: ReceiverWorld) => ctx.t.post('/api/developer', { authkey: ctx.authkey, message: 'loja', apagarDispositivo: 'true' })
const createAgent = (ctx: ReceiverWorld) => ctx.t.post('/api/v2/ia', { authkey: ctx.authkey, device: 'loja', agent_name: 'Bia' })

test('op 2 while the deletion runs its removal hooks: 404, and no agent record is left', async context => {
  const ctx = await setUp(context)
  const hold = ctx.store.pause('delete', `device:${ctx.device.id}`) // the device record's own deletion, after the hooks
  const deleting = deleteDevice(ctx)
  await hold.reached
  const created = await createAgent(ctx)
  hold.release()
  assert.is((await deleting).status, 200)
  assert.equal([created.status, created.body.message], [404, 'Nenhum dispositivo encontrado.'])
  assert.equal(await ctx.store.keys('agent:'), [])
})

test('op 2 whose agent record lands after the whole deletion: 404, and no agent record is left', async context => {
  const ctx = await setUp(context)
  const hold = ctx.store.pause('set', 'agent:')
  const creating = createAgent(ctx)
  await hold.reached
  assert.is((await deleteDevice(ctx)).status, 200)
  hold.release()
  const created = await creating
  assert.equal([created.status, created.body.message], [404, 'Nenhum dispositivo encontrado.'])
  assert.equal(await ctx.store.keys('agent:'), [])
})

test('an answer under way while the device is deleted leaves no flow record, reply window or taken text', async context => {
  let asked!: () => void
  let answer!: (reply: string) => void
  const wasAsked = new Promise<void>(resolve => (asked = resolve))
  const ctx = await setUp(context, () => (asked(), new Promise<string>(resolve => (answer = resolve))))
  assert.is((await createAgent(ctx)).status, 200)
  await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'oi' })
  await wasAsked
  assert.is((await deleteDevice(ctx)).status, 200)
  answer('tarde demais')
  await ctx.t.stop() // waits for the answer under way
  assert.equal([...(await ctx.store.keys('flow')), ...(await ctx.store.keys('agent:'))], [])
})

test.run()
