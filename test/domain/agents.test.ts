import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { waitFor } from '../helpers/gateway.ts'
import { DEVICE_PHONE, FRIEND, OTHER } from '../helpers/messaging.ts'
import { receiverWorld, stopReceiverWorld, type ReceiverWorld } from '../helpers/receiver.ts'
import type { AgentRequest, AgentResponder } from '../../src/ports/agents.ts'
import type { GatewayOptions } from '../../src/options.ts'
import { internalsOf } from '../../src/internals.ts'

interface Context extends ReceiverWorld {
  requests: AgentRequest[]
  respond: AgentResponder['respond']
}

const test = suite<Context>('agents: the responder answers incoming texts; operation 19 clears the history')

async function setUp(ctx: Context, options: GatewayOptions = {}, withAgent = true): Promise<void> {
  ctx.requests = []
  ctx.respond = ({ text }) => `Você disse: ${text}`
  const agentResponder: AgentResponder['respond'] = request => {
    ctx.requests.push(structuredClone({ ...request, signal: undefined }) as unknown as AgentRequest)
    return ctx.respond(request)
  }
  Object.assign(ctx, await receiverWorld('agent-device', { agentResponder, ...options }))
  if (withAgent) {
    const created = await ctx.t.post('/api/v2/ia', { authkey: ctx.authkey, device: 'agent-device', agent_name: 'Atendente' })
    assert.is(created.status, 200)
  }
}

test.after.each(stopReceiverWorld)

/** Texts `phone` received from the device. */
const inbox = (ctx: Context, phone = FRIEND) =>
  ctx.t.network.inbox(phone).flatMap(entry => (entry.type === 'text' && entry.from === DEVICE_PHONE ? [entry.text] : []))

async function say(ctx: Context, text: string, from = FRIEND): Promise<void> {
  const before = ctx.requests.length
  await ctx.t.network.sendFromPhone(from, DEVICE_PHONE, { type: 'text', text })
  await waitFor(() => ctx.requests.length > before, 5000, 'the responder to be asked')
}

test('an incoming text is answered through the device: the phone receives the reply', async ctx => {
  await setUp(ctx)
  ctx.t.network.registerPhone(FRIEND, { pushName: 'Maria' })
  await say(ctx, 'oi')
  await waitFor(() => inbox(ctx).length === 1, 5000, 'the reply')
  assert.equal(inbox(ctx), ['Você disse: oi'])
  const [request] = ctx.requests
  assert.is(request.agent.name, 'Atendente')
  assert.is(request.device.id, ctx.device.id)
  assert.is(request.device.phone, DEVICE_PHONE)
  assert.equal(request.contact, { phone: FRIEND, name: 'Maria', chat: FRIEND })
  assert.is(request.text, 'oi')
  assert.equal(request.history, [])
})

test('the reply also produces a Texto webhook with fromMe true', async ctx => {
  await setUp(ctx)
  await say(ctx, 'olá')
  await ctx.receiver.waitForHooks(2)
  const payloads = ctx.receiver.verified(ctx.device.webhookSecret)
  const reply = payloads.find(p => p.fromMe)
  assert.ok(reply, 'a fromMe event')
  assert.equal([reply.event, reply.text, reply.from, reply.to], ['Texto', 'Você disse: olá', DEVICE_PHONE, FRIEND])
  assert.ok(payloads.some(p => !p.fromMe && p.text === 'olá'))
})

test('the history holds the earlier turns; operation 19 clears it for that contact only', async ctx => {
  await setUp(ctx)
  await say(ctx, 'primeira')
  await waitFor(() => inbox(ctx).length === 1)
  await say(ctx, 'segunda')
  await say(ctx, 'do outro', OTHER)
  await waitFor(() => inbox(ctx).length === 2 && inbox(ctx, OTHER).length === 1)
  assert.equal(
    ctx.requests[1].history.map(turn => [turn.role, turn.text]),
    [
      ['contact', 'primeira'],
      ['agent', 'Você disse: primeira'],
    ],
  )
  const cleared = await ctx.t.post('/api/settings', {
    appkey: ctx.device.appkey,
    authkey: ctx.authkey,
    to: `+${FRIEND}`,
    message: 'false',
    deleteConversaFluxo: 'true',
  })
  assert.equal(cleared.body, { status: 200, message: 'Conversas excluídas com sucesso.', excluidas: 1 })
  await say(ctx, 'terceira')
  assert.equal(ctx.requests.at(-1)!.history, [])
  await say(ctx, 'de novo', OTHER)
  assert.is(ctx.requests.at(-1)!.history.length, 2, "the other contact's conversation is kept")
})

test('operation 19 with to "todos" clears every conversation of the device', async ctx => {
  await setUp(ctx)
  await say(ctx, 'a')
  await say(ctx, 'b', OTHER)
  await waitFor(() => inbox(ctx).length === 1 && inbox(ctx, OTHER).length === 1)
  const cleared = await ctx.t.post('/api/settings', {
    appkey: ctx.device.appkey,
    authkey: ctx.authkey,
    to: 'todos',
    message: 'false',
    deleteConversaFluxo: 'true',
  })
  assert.is(cleared.body.excluidas, 2)
  await say(ctx, 'c')
  await say(ctx, 'd', OTHER)
  assert.equal(
    ctx.requests.slice(-2).map(r => r.history),
    [[], []],
  )
})

test('operation 19 takes the contact in every spelling `to` has (decisions.md): <digits>@c.us and @s.whatsapp.net too', async ctx => {
  await setUp(ctx)
  await say(ctx, 'a')
  await say(ctx, 'b', OTHER)
  await waitFor(() => inbox(ctx).length === 1 && inbox(ctx, OTHER).length === 1)
  const base = { appkey: ctx.device.appkey, authkey: ctx.authkey, message: 'false', deleteConversaFluxo: 'true' }
  const answers = [await ctx.t.post('/api/settings', { ...base, to: `${FRIEND}@c.us` })]
  answers.push(await ctx.t.post('/api/settings', { ...base, to: `${OTHER}@S.WhatsApp.net` }))
  assert.equal(
    answers.map(a => [a.status, a.body.excluidas]),
    [
      [200, 1],
      [200, 1],
    ],
  )
})

test('the history is bounded by agentHistoryLimit', async ctx => {
  await setUp(ctx, { agentHistoryLimit: 3 })
  for (const text of ['1', '2', '3']) {
    await say(ctx, text)
    await waitFor(() => inbox(ctx).length === Number(text))
  }
  assert.equal(
    ctx.requests[2].history.map(turn => turn.text),
    ['Você disse: 1', '2', 'Você disse: 2'],
  )
})

test('no agent on the device, a group text or the device’s own text: the responder is not asked', async ctx => {
  await setUp(ctx, {}, false)
  await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'sem agente' })
  await ctx.t.post('/api/v2/ia', { authkey: ctx.authkey, device: 'agent-device', agent_name: 'Tardio' })
  const group = ctx.t.network.createGroup(FRIEND, 'Grupo', [DEVICE_PHONE])
  await ctx.t.network.sendFromPhone(FRIEND, group.id, { type: 'text', text: 'no grupo' })
  await ctx.t.network.sendFromPhone(DEVICE_PHONE, FRIEND, { type: 'text', text: 'eu mesmo' })
  await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'image', caption: 'foto' })
  await say(ctx, 'agora sim')
  assert.equal(
    ctx.requests.map(r => [r.agent.name, r.text]),
    [['Tardio', 'agora sim']],
  )
})

test('a responder that throws or answers nothing sends no reply, and the next text is still answered', async ctx => {
  await setUp(ctx)
  ctx.respond = ({ text }) => {
    if (text === 'falhe') throw new Error('responder bug')
    if (text === 'cale') return undefined
    return `ok ${text}`
  }
  await say(ctx, 'falhe')
  await say(ctx, 'cale')
  await say(ctx, 'fale')
  await waitFor(() => inbox(ctx).length === 1)
  assert.equal(inbox(ctx), ['ok fale'])
  assert.equal(
    ctx.requests[2].history.map(turn => turn.text),
    ['falhe', 'cale'],
  )
})

test("a reply past WhatsApp's text limit (65,536 characters, as the API's `message`) is not sent, as an HTTP responder's past its size is not", async ctx => {
  await setUp(ctx)
  ctx.respond = ({ text }) => (text === 'longo' ? 'a'.repeat(65_537) : text === 'limite' ? '😀'.repeat(65_536) : `ok ${text}`)
  await say(ctx, 'longo')
  await say(ctx, 'limite')
  await say(ctx, 'fale')
  await waitFor(() => inbox(ctx).includes('ok fale'))
  assert.equal(
    inbox(ctx).map(text => (text.length > 20 ? `${[...text].length} code points` : text)),
    ['65536 code points', 'ok fale'],
  )
})

test('a responder slower than agentTimeoutMs is given up on (its signal aborts) and the contact’s next text is answered', async ctx => {
  await setUp(ctx, { agentTimeoutMs: 100 })
  let aborted = false
  ctx.respond = ({ text, signal }) => {
    if (text !== 'lento') return `ok ${text}`
    signal.addEventListener('abort', () => (aborted = true))
    return new Promise<string>(() => {})
  }
  await say(ctx, 'lento')
  await say(ctx, 'rápido')
  await waitFor(() => inbox(ctx).length === 1)
  assert.equal(inbox(ctx), ['ok rápido'])
  assert.ok(aborted, 'the responder’s signal was aborted')
})

test('two bots answering each other stop at the per-contact reply limit', async ctx => {
  await setUp(ctx)
  for (let i = 0; i < 10; i++) await say(ctx, `eco ${i}`)
  await waitFor(() => inbox(ctx).length === 10)
  await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'eco 10' })
  await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'eco final' })
  // The texts past the limit are still part of the conversation, just not answered.
  await waitFor(async () => (await internalsOf(ctx.t.gateway).flows.history(ctx.device.id, FRIEND)).turns.some(turn => turn.text === 'eco final'))
  assert.is(ctx.requests.length, 10)
  assert.is(inbox(ctx).length, 10)
})

test('the reply limit holds whatever agentHistoryLimit is: two bots stop at 10 replies a minute with a history of 3 turns', async ctx => {
  await setUp(ctx, { agentHistoryLimit: 3 })
  for (let i = 0; i < 10; i++) await say(ctx, `eco ${i}`)
  for (const text of ['eco 10', 'eco 11', 'eco final']) await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text })
  await waitFor(async () => (await internalsOf(ctx.t.gateway).flows.history(ctx.device.id, FRIEND)).turns.some(turn => turn.text === 'eco final'))
  assert.is(inbox(ctx).length, 10)
})

test('operation 19 keeps the reply limit: deleting the conversation after every reply still stops the agent at 10 a minute', async ctx => {
  await setUp(ctx)
  const deleteFlows = (to: string) =>
    ctx.t.post('/api/settings', { appkey: ctx.device.appkey, authkey: ctx.authkey, to, message: 'false', deleteConversaFluxo: 'true' })
  for (let i = 0; i < 10; i++) {
    await say(ctx, `eco ${i}`)
    await waitFor(() => inbox(ctx).length === i + 1)
    assert.is((await deleteFlows(i % 2 ? 'todos' : FRIEND)).body.excluidas, 1)
  }
  await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'eco 10' })
  await waitFor(async () => (await internalsOf(ctx.t.gateway).flows.history(ctx.device.id, FRIEND)).turns.some(turn => turn.text === 'eco 10'))
  assert.is(inbox(ctx).length, 10, 'no 11th reply in the minute')
  assert.is(ctx.requests.length, 10)
})

test('agentHistoryLimit 0 keeps no turns: the responder gets an empty history and the stored conversation does not grow', async ctx => {
  await setUp(ctx, { agentHistoryLimit: 0 })
  for (const text of ['1', '2', '3']) await say(ctx, text)
  await waitFor(() => inbox(ctx).length === 3)
  assert.equal(
    ctx.requests.map(r => r.history.length),
    [0, 0, 0],
  )
})

test("one contact's flood of texts never starves the other contacts' agents (of any account)", async ctx => {
  await setUp(ctx)
  let release!: () => void
  const held = new Promise<void>(resolve => (release = resolve))
  ctx.respond = async ({ text }) => (text.startsWith('spam') ? (await held, undefined) : `ok ${text}`)
  for (let i = 0; i < 1_000; i++) await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: `spam ${i}` })
  await say(ctx, 'oi', OTHER)
  await waitFor(() => inbox(ctx, OTHER).length === 1, 5000, 'the reply to the other contact')
  release()
})

test('createGateway refuses an agentResponder that is neither a function nor an object with respond()', async () => {
  const { createGateway } = await import('../../src/index.ts')
  const { memoryTransport } = await import('../../adapters/transport-memory/index.ts')
  try {
    await createGateway({ transport: memoryTransport(), agentResponder: { answer: () => 'x' } as any })
    assert.unreachable('should have thrown')
  } catch (err) {
    assert.match((err as Error).message, /agentResponder/)
  }
})

test.run()
