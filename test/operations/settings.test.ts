import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { waitFor } from '../helpers/gateway.ts'
import { FRIEND, DEVICE_PHONE } from '../helpers/messaging.ts'
import { receiverWorld, stopReceiverWorld, type ReceiverWorld } from '../helpers/receiver.ts'

type Context = ReceiverWorld

const test = suite<Context>('operations 19 and 20 (/api/settings)')

test.before.each(async ctx => {
  Object.assign(ctx, await receiverWorld('settings-device', { webhookRetryMs: [50] }))
})

test.after.each(stopReceiverWorld)

const switchWebhook = (ctx: Context, type: string, on: boolean | string, extra: Record<string, unknown> = {}) =>
  ctx.t.post('/api/settings', { appkey: ctx.device.appkey, authkey: ctx.authkey, type, message: ctx.device.id, statusWebhook: String(on), ...extra })

/** Texts the receiver got so far. */
const texts = (ctx: Context) => ctx.receiver.hooks.map(h => JSON.parse(h.body).text)

test('statusWebhook false for chat stops chat events; true again lets them flow', async ctx => {
  const off = await switchWebhook(ctx, 'chat', false)
  assert.equal(off.body, { status: 200, message: 'Webhook desativado.', webhook: { chat: false, grupo: true } })
  await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'silêncio' })
  assert.is(await ctx.t.gateway.webhooks.pending(), 0, 'nothing recorded while chat events are off')

  const on = await switchWebhook(ctx, 'chat', true)
  assert.equal(on.body, { status: 200, message: 'Webhook ativado.', webhook: { chat: true, grupo: true } })
  await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'de volta' })
  await ctx.receiver.waitForHooks(1)
  assert.equal(texts(ctx), ['de volta'])
})

test('group events switch independently of chat events', async ctx => {
  const group = ctx.t.network.createGroup(FRIEND, 'Equipe', [DEVICE_PHONE])
  await switchWebhook(ctx, 'chat', false)
  await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'chat desligado' })
  await ctx.t.network.sendFromPhone(FRIEND, group.id, { type: 'text', text: 'grupo ligado' })
  await ctx.receiver.waitForHooks(1)

  await switchWebhook(ctx, 'chat', true)
  const groupOff = await switchWebhook(ctx, 'GRUPO', 'false')
  assert.equal(groupOff.body.webhook, { chat: true, grupo: false })
  await ctx.t.network.sendFromPhone(FRIEND, group.id, { type: 'text', text: 'grupo desligado' })
  await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'chat ligado' })
  await ctx.receiver.waitForHooks(2)
  await waitFor(async () => (await ctx.t.gateway.webhooks.pending()) === 0)
  assert.equal(texts(ctx).sort(), ['chat ligado', 'grupo ligado'])
  assert.equal(ctx.receiver.hooks.map(h => JSON.parse(h.body).isGroup).sort(), [false, true])
})

test('operation 20 finds the device by id, name or appkey in message, and appkey by appkey or name', async ctx => {
  for (const message of [ctx.device.id, 'settings-device', ctx.device.appkey]) {
    const answer = await switchWebhook(ctx, 'chat', false, { message, appkey: 'settings-device' })
    assert.is(answer.status, 200, message)
  }
})

test('operation 20 answers 401 validation.required for a missing or invalid field or an unknown authkey', async ctx => {
  const good = { appkey: ctx.device.appkey, authkey: ctx.authkey, type: 'chat', message: ctx.device.id, statusWebhook: 'true' }
  const bad: Record<string, unknown>[] = [
    { ...good, type: undefined },
    { ...good, type: 'canal' },
    { ...good, statusWebhook: 'talvez' },
    { ...good, message: '' },
    { ...good, appkey: undefined },
    { ...good, authkey: 'not-a-key' },
  ]
  for (const body of bad) {
    const answer = await ctx.t.post('/api/settings', body)
    assert.equal([answer.status, answer.body], [401, { status: 401, message: 'validation.required' }], JSON.stringify(body))
  }
})

test('operation 20 answers 404 for a device of another account, or a message naming another device', async ctx => {
  const other = await ctx.t.register()
  const foreign = await ctx.t.addDevice(other.authkey, 'foreign')
  const answers = [
    await switchWebhook(ctx, 'chat', false, { appkey: foreign.appkey }),
    await switchWebhook(ctx, 'chat', false, { message: foreign.id }),
    await switchWebhook(ctx, 'chat', false, { authkey: other.authkey }),
  ]
  await ctx.t.addDevice(ctx.authkey, 'sibling')
  answers.push(await switchWebhook(ctx, 'chat', false, { message: 'sibling' }))
  for (const answer of answers) assert.equal(answer.body, { status: 404, message: 'Nenhum dispositivo encontrado.' })
})

test('/api/settings without a distinguishing field answers 401 validation.required', async ctx => {
  const answer = await ctx.t.post('/api/settings', { appkey: ctx.device.appkey, authkey: ctx.authkey, message: 'false' })
  assert.equal([answer.status, answer.body.message], [401, 'validation.required'])
})

test('operation 19 answers 200 with the number of conversations deleted (0 when there was none)', async ctx => {
  const answer = await ctx.t.post('/api/settings', {
    appkey: ctx.device.appkey,
    authkey: ctx.authkey,
    to: '+55 11 98888-0002',
    message: 'false',
    deleteConversaFluxo: 'true',
  })
  assert.equal(answer.body, { status: 200, message: 'Conversas excluídas com sucesso.', excluidas: 0 })
  const all = await ctx.t.post('/api/settings', { appkey: ctx.device.appkey, authkey: ctx.authkey, to: 'TODOS', message: false, deleteConversaFluxo: true })
  assert.equal(all.body, { status: 200, message: 'Conversas excluídas com sucesso.', excluidas: 0 })
})

test('operation 19 answers 401 validation.required for a bad field and 404 for a device of another account', async ctx => {
  const good = { appkey: ctx.device.appkey, authkey: ctx.authkey, to: 'todos', message: 'false', deleteConversaFluxo: 'true' }
  for (const body of [
    { ...good, to: 'alguém' },
    { ...good, to: undefined },
    { ...good, message: 'true' },
    { ...good, deleteConversaFluxo: 'false' },
    { ...good, authkey: 'unknown' },
  ]) {
    const answer = await ctx.t.post('/api/settings', body)
    assert.equal([answer.status, answer.body.message], [401, 'validation.required'], JSON.stringify(body))
  }
  const other = await ctx.t.register()
  const answer = await ctx.t.post('/api/settings', { ...good, authkey: other.authkey })
  assert.equal(answer.body, { status: 404, message: 'Nenhum dispositivo encontrado.' })
})

test('operation 19 wins over operation 20 when both distinguishing fields are present', async ctx => {
  const answer = await ctx.t.post('/api/settings', {
    appkey: ctx.device.appkey,
    authkey: ctx.authkey,
    to: 'todos',
    message: 'false',
    deleteConversaFluxo: 'true',
    statusWebhook: 'false',
    type: 'chat',
  })
  assert.is(answer.body.message, 'Conversas excluídas com sucesso.')
})

test.run()
