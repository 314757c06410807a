import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { DEVICE_PHONE, FRIEND } from '../helpers/messaging.ts'
import { receiverWorld, stopReceiverWorld, type ReceiverWorld } from '../helpers/receiver.ts'
import { internalsOf } from '../../src/internals.ts'

const test = suite<ReceiverWorld>('agents without a responder')
test.after.each(stopReceiverWorld)

test('without a responder, texts are kept in the flow conversation (README) and nothing is sent', async ctx => {
  Object.assign(ctx, await receiverWorld('agent-device'))
  await ctx.t.post('/api/v2/ia', { authkey: ctx.authkey, device: 'agent-device', agent_name: 'A' })
  await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'oi' })
  await ctx.receiver.waitForHooks(1)
  await new Promise(r => setTimeout(r, 300))
  const { turns } = await internalsOf(ctx.t.gateway).flows.history(ctx.device.id, FRIEND)
  assert.equal(
    turns.map(t => t.text),
    ['oi'],
  )
  assert.equal(ctx.t.network.inbox(FRIEND), [], 'nothing is sent')
})
test.run()
