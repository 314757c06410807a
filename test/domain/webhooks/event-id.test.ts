import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { IncomingMessage } from '../../../src/ports/transport.ts'
import { DEVICE_PHONE, FRIEND, OTHER } from '../../helpers/messaging.ts'
import { receiverWorld, stopReceiverWorld, type ReceiverWorld } from '../../helpers/receiver.ts'

const test = suite<ReceiverWorld>('webhook-id: one per message, where its id belongs (chat, direction, group sender)')

test.before.each(async ctx => {
  Object.assign(ctx, await receiverWorld('event-id-device', { webhookRetryMs: [50] }))
  // Slow answers: an event stays pending while the next one arrives, so the outbox compares their ids.
  ctx.receiver.answer(() => ({ status: 200, delayMs: 300 }))
})

test.after.each(stopReceiverWorld)

/** A text with id `id` handed to the device by the simulated network, as the network hands it over (`fields` on top). */
async function deliver(ctx: ReceiverWorld, id: string, text: string, fields: Partial<IncomingMessage>): Promise<void> {
  const message: IncomingMessage = {
    id,
    chat: FRIEND,
    from: FRIEND,
    to: DEVICE_PHONE,
    fromMe: false,
    isGroup: false,
    timestamp: Date.now(),
    content: { kind: 'text', text },
    ...fields,
  }
  await ctx.t.network.devices.deliver(ctx.device.id, message)
}

/** Wait until the outbox is empty, then the texts received and the webhook-ids they came with. */
async function received(ctx: ReceiverWorld): Promise<{ texts: string[]; ids: Set<string> }> {
  await ctx.t.network.settled()
  const deadline = Date.now() + 10_000
  while ((await ctx.t.gateway.webhooks.pending()) > 0 || ctx.receiver.answered < ctx.receiver.hooks.length) {
    if (Date.now() > deadline) throw new Error('the outbox did not drain')
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  const texts = ctx.receiver.verified(ctx.device.webhookSecret).map(p => p.text as string)
  return { texts: texts.sort(), ids: new Set(ctx.receiver.hooks.map(h => h.headers['webhook-id'])) }
}

test('two messages that carry the same id in two chats both reach the webhook, each with its own webhook-id', async ctx => {
  await deliver(ctx, '3EB0SAMEID0001', 'from friend', {})
  await deliver(ctx, '3EB0SAMEID0001', 'from other', { chat: OTHER, from: OTHER })
  const { texts, ids } = await received(ctx)
  assert.equal(texts, ['from friend', 'from other'])
  assert.is(ids.size, 2)
})

test('in a group, two senders reusing one id are two events; a contact reusing an own message id is another event', async ctx => {
  const group = ctx.t.network.createGroup(FRIEND, 'Família', [DEVICE_PHONE, OTHER]).id
  const inGroup = { chat: group, to: group, isGroup: true, group }
  await deliver(ctx, '3EB0GROUPID001', 'friend in group', inGroup)
  await deliver(ctx, '3EB0GROUPID001', 'other in group', { ...inGroup, from: OTHER })
  await deliver(ctx, '3EB0MINE000001', 'mine', { chat: FRIEND, from: DEVICE_PHONE, to: FRIEND, fromMe: true })
  await deliver(ctx, '3EB0MINE000001', 'theirs', {})
  const { texts, ids } = await received(ctx)
  assert.equal(texts, ['friend in group', 'mine', 'other in group', 'theirs'])
  assert.is(ids.size, 4)
})

test('the same message handed over twice is one event, its phone learned or not (named by its LID)', async ctx => {
  await deliver(ctx, '3EB0TWICE00001', 'once', {})
  await deliver(ctx, '3EB0TWICE00001', 'once', {})
  await deliver(ctx, '3EB0LIDMSG0001', 'by lid', { chat: '123456789012@lid', from: undefined, fromLid: '123456789012@lid' })
  await deliver(ctx, '3EB0LIDMSG0001', 'by lid', { chat: OTHER, from: OTHER, fromLid: '123456789012@lid' })
  const { texts, ids } = await received(ctx)
  assert.equal(texts, ['by lid', 'once'])
  assert.is(ids.size, 2)
})

test("a text the gateway sent, handed over again by the network as the device's own, is one event", async ctx => {
  const answer = await ctx.t.post('/api/create-message', { authkey: ctx.authkey, appkey: ctx.device.appkey, to: FRIEND, message: 'enviado' })
  assert.is(answer.status, 200, answer.text)
  await deliver(ctx, answer.body.id, 'enviado', { chat: FRIEND, from: DEVICE_PHONE, to: FRIEND, fromMe: true })
  const { texts, ids } = await received(ctx)
  assert.equal(texts, ['enviado'])
  assert.is(ids.size, 1)
})

test.run()
