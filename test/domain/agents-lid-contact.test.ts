import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { waitFor } from '../helpers/gateway.ts'
import { DEVICE_PHONE, FRIEND } from '../helpers/messaging.ts'
import { receiverWorld, stopReceiverWorld, type ReceiverWorld } from '../helpers/receiver.ts'
import type { AgentRequest } from '../../src/ports/agents.ts'

/**
 * One contact, one flow conversation, however the network names it: by its LID alone while it hides
 * its number (docs/api.md: `from` is then the LID), by phone and LID once the number is shown (the
 * webhook's `from` and `fromLid`; "its phone may be learned later"). Operation 19 takes either name
 * (docs/api.md: "a phone number (any spelling), a LID"). The conversation was keyed by the phone when
 * a text showed one, else by the LID: the contact's history started over when its number was learned,
 * and operation 19 given the LID of a contact whose phone is shown deleted nothing.
 */
interface Context extends ReceiverWorld {
  requests: AgentRequest[]
}

const test = suite<Context>("agents: a contact's flow conversation is one, named by its phone or its LID")
const LID = '123456789012345@lid'

test.before.each(async ctx => {
  ctx.requests = []
  const agentResponder = (request: AgentRequest) => {
    ctx.requests.push(structuredClone({ ...request, signal: undefined }) as unknown as AgentRequest)
    return `re: ${request.text}`
  }
  Object.assign(ctx, await receiverWorld('agent-device', { agentResponder }))
  assert.is((await ctx.t.post('/api/v2/ia', { authkey: ctx.authkey, device: 'agent-device', agent_name: 'Bia' })).status, 200)
})
test.after.each(stopReceiverWorld)

/** `text` from FRIEND, answered. */
async function say(ctx: Context, text: string): Promise<AgentRequest> {
  const before = ctx.requests.length
  await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text })
  await waitFor(() => ctx.requests.length > before, 5000, 'the responder to be asked')
  return ctx.requests.at(-1)!
}

const deleteFlow = (ctx: Context, to: string) =>
  ctx.t.post('/api/settings', { appkey: ctx.device.appkey, authkey: ctx.authkey, to, message: 'false', deleteConversaFluxo: 'true' })

test('a contact that hid its number and then shows it keeps its history', async ctx => {
  ctx.t.network.registerPhone(FRIEND, { lid: LID, hidePhone: true })
  assert.equal((await say(ctx, 'oi')).contact, { lid: LID, chat: LID })
  ctx.t.network.registerPhone(FRIEND, { lid: LID })
  const request = await say(ctx, 'tudo bem?')
  assert.equal(request.contact, { phone: FRIEND, lid: LID, chat: FRIEND })
  assert.equal(
    request.history.map(turn => turn.text),
    ['oi', 're: oi'],
    'the turns of the contact while its number was hidden',
  )
})

test('operation 19 given the LID of a contact whose phone is shown deletes its conversation', async ctx => {
  ctx.t.network.registerPhone(FRIEND, { lid: LID })
  await say(ctx, 'oi')
  await waitFor(() => ctx.receiver.hooks.length >= 2, 5000, 'the webhooks')
  assert.equal((await deleteFlow(ctx, LID)).body, { status: 200, message: 'Conversas excluídas com sucesso.', excluidas: 1 })
  assert.equal((await say(ctx, 'de novo')).history, [], 'the conversation is gone')
})

test('operation 19 given the phone deletes the conversation kept while the number was hidden', async ctx => {
  ctx.t.network.registerPhone(FRIEND, { lid: LID, hidePhone: true })
  await say(ctx, 'oi')
  ctx.t.network.registerPhone(FRIEND, { lid: LID })
  await say(ctx, 'tudo bem?')
  assert.equal((await deleteFlow(ctx, `+${FRIEND}`)).body.excluidas, 1)
  assert.equal((await say(ctx, 'de novo')).history, [], 'no turn of the contact is left')
})

test.run()
