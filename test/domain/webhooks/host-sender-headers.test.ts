import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createHmac } from 'node:crypto'
import type { WebhookSender } from '../../../src/index.ts'
import { DEVICE_PHONE, FRIEND } from '../../helpers/messaging.ts'
import { receiverWorld, stopReceiverWorld, type ReceiverWorld } from '../../helpers/receiver.ts'

type Context = ReceiverWorld
const test = suite<Context>('a host webhook sender POSTs the delivery as is')
test.after.each(stopReceiverWorld)

/** A host's own sender, as the port describes one: the delivery's url, headers and body POSTed as they are, with fetch. */
const fetchSender: WebhookSender = {
  async send({ url, headers, body }) {
    const response = await fetch(url, { method: 'POST', headers, body, redirect: 'manual' })
    await response.arrayBuffer()
    return { status: response.status }
  },
}

/** docs/api.md: v1, + base64 HMAC-SHA256(base64-decoded secret after whsec_, `${id}.${ts}.${body}`). */
function documented(secret: string, id: string, ts: string, body: string): string {
  return (
    'v1,' +
    createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64'))
      .update(`${id}.${ts}.${body}`)
      .digest('base64')
  )
}

test('the receiver gets the documented headers: content-type application/json and a valid signature', async ctx => {
  Object.assign(ctx, await receiverWorld('host-sender', { webhooks: fetchSender }))
  await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'Olá' })
  const [hook] = await ctx.receiver.waitForHooks(1)
  assert.is(hook.payload?.text, 'Olá')
  assert.is(hook.headers['webhook-signature'], documented(ctx.device.webhookSecret, hook.headers['webhook-id'], hook.headers['webhook-timestamp'], hook.body))
  assert.is(hook.headers['content-type'], 'application/json', 'a JSON body parser (koa-bodyparser, express.json()) reads the event')
})

test.run()
