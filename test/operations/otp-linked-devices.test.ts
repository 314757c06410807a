import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { DEVICE_PHONE, FRIEND } from '../helpers/messaging.ts'
import { receiverWorld, stopReceiverWorld, type ReceiverWorld } from '../helpers/receiver.ts'

/**
 * OTP texts never reach a webhook (docs/decisions.md). A WhatsApp account shows what one of its linked
 * devices sends to its other linked devices as their own message (`fromMe`); two devices of the gateway
 * linked to one phone (in one account or two) are such devices. The sending device kept its code off
 * the message feed, but the other device reported it as a `Texto` with `fromMe: true`: its webhook,
 * another account's too, got the code in clear.
 */
const test = suite<ReceiverWorld>('OTP: a code sent by one device never reaches the webhook of another device on the phone')

test.after.each(stopReceiverWorld)

test("another account's device linked to the same phone gets the device's texts, not its codes", async ctx => {
  Object.assign(ctx, await receiverWorld('watcher')) // device `watcher` on DEVICE_PHONE, its webhook the receiver
  const { authkey } = await ctx.t.register()
  const sender = await ctx.t.linkedDevice(authkey, 'otp-sender', DEVICE_PHONE)
  const otp = await ctx.t.post('/api/create-message', { appkey: sender.appkey, authkey, to: FRIEND, enviarOTP: 'true', message: 'Código: {code}' })
  assert.equal(otp.status, 200)
  const code = /Código: (\d{6})/.exec(JSON.stringify(ctx.t.network.inbox(FRIEND)))![1]
  const text = await ctx.t.post('/api/create-message', { appkey: sender.appkey, authkey, to: FRIEND, message: 'depois do código' })
  assert.equal(text.status, 200)
  await ctx.receiver.waitForHooks(1)
  const payloads = ctx.receiver.verified(ctx.device.webhookSecret)
  assert.deepEqual(
    payloads.map(p => [p.event, p.fromMe, p.text]),
    [['Texto', true, 'depois do código']],
    'the plain text only',
  )
  assert.ok(!ctx.receiver.hooks.some(hook => hook.body.includes(`Código: ${code}`)), 'no webhook carries the code')
})

test("a code sent to the contact's LID stays off the webhook of another account's device on the phone, which names that chat by the phone", async ctx => {
  Object.assign(ctx, await receiverWorld('watcher'))
  const lid = ctx.t.network.registerPhone(FRIEND, { lid: true })!
  const { authkey } = await ctx.t.register()
  const sender = await ctx.t.linkedDevice(authkey, 'otp-sender', DEVICE_PHONE)
  const otp = await ctx.t.post('/api/create-message', { appkey: sender.appkey, authkey, to: lid, enviarOTP: 'true', message: 'Código: {code}' })
  assert.equal(otp.status, 200, otp.text)
  const code = /Código: (\d{6})/.exec(JSON.stringify(ctx.t.network.inbox(FRIEND)))![1]
  const text = await ctx.t.post('/api/create-message', { appkey: sender.appkey, authkey, to: lid, message: 'depois do código' })
  assert.equal(text.status, 200, text.text)
  await ctx.receiver.waitForHooks(1)
  const payloads = ctx.receiver.verified(ctx.device.webhookSecret)
  assert.deepEqual(
    payloads.map(p => [p.event, p.fromMe, p.chat, p.text]),
    [['Texto', true, FRIEND, 'depois do código']],
    'the plain text only',
  )
  assert.ok(!ctx.receiver.hooks.some(hook => hook.body.includes(`Código: ${code}`)), 'no webhook carries the code')
})

test.run()
