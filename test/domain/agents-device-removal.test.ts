import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { waitFor } from '../helpers/gateway.ts'
import { DEVICE_PHONE, FRIEND } from '../helpers/messaging.ts'
import { memoryStorage, type MemoryStorage } from '../helpers/memory-storage.ts'
import { receiverWorld, stopReceiverWorld, type ReceiverWorld } from '../helpers/receiver.ts'

/**
 * Operation 6 on a device whose agent has answered: what a deleted device leaves in the store. Its
 * agents, flow conversations, reply windows and the texts its agent took (`flow-taken`, kept a day)
 * belong to it alone and go with it.
 */
const test = suite<Partial<ReceiverWorld> & { storage: MemoryStorage }>('agents: deleting a device deletes everything of its agents')

test.after.each(stopReceiverWorld)

/** Every stored entry as `key => JSON value`. */
async function entries(storage: MemoryStorage): Promise<[string, string][]> {
  const all: [string, string][] = []
  for await (const [key, value] of storage.list('')) all.push([key, JSON.stringify(value)])
  return all
}

test('after an answer, operation 6 leaves no agent, flow, reply window or taken text of the device', async ctx => {
  ctx.storage = memoryStorage()
  Object.assign(ctx, await receiverWorld('agent-device', { storage: ctx.storage, agentResponder: ({ text }) => `re: ${text}` }))
  const { t, authkey, device } = ctx as ReceiverWorld
  const created = await t.post('/api/v2/ia', { authkey, device: 'agent-device', agent_name: 'Atendente' })
  assert.is(created.status, 200)
  const agentId: string = created.body.agent_id
  await t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'oi' })
  await waitFor(() => t.network.inbox(FRIEND).some(entry => entry.type === 'text' && entry.text === 're: oi'), 5000, 'the reply')
  const before = (await entries(ctx.storage)).map(([key]) => key)
  for (const prefix of [`agent:${agentId}`, `flow:${device.id}:`, `flow-replies:${device.id}:`, `flow-taken:${device.id}:`])
    assert.ok(
      before.some(key => key.startsWith(prefix)),
      `${prefix} stored before the deletion`,
    )

  const deleted = await t.post('/api/developer', { authkey, message: 'agent-device', apagarDispositivo: 'true' })
  assert.is(deleted.status, 200, deleted.text)
  const left = (await entries(ctx.storage)).filter(([key, value]) => /^(agent|flow)/.test(key) || key.includes(device.id) || value.includes(agentId))
  assert.equal(left, [], 'nothing of the agent or its flows is left')
})

test.run()
