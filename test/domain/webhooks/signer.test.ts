import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { Webhook } from 'standardwebhooks'
import { signWebhook, webhookHeaders } from '../../../src/domain/webhooks/signer.ts'

const test = suite('webhook signer (Standard Webhooks)')

// The published Standard Webhooks test vector.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
}

test('signWebhook reproduces the published Standard Webhooks test vector', () => {
  assert.is(signWebhook(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body), VECTOR.signature)
})

test('signWebhook takes the secret with or without its whsec_ prefix', () => {
  assert.is(signWebhook(VECTOR.secret.slice('whsec_'.length), VECTOR.id, VECTOR.timestamp, VECTOR.body), VECTOR.signature)
})

test('signWebhook changes when the id, the timestamp or one byte of the body changes', () => {
  const base = signWebhook(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body)
  assert.is.not(signWebhook(VECTOR.secret, 'msg_other', VECTOR.timestamp, VECTOR.body), base)
  assert.is.not(signWebhook(VECTOR.secret, VECTOR.id, VECTOR.timestamp + 1, VECTOR.body), base)
  assert.is.not(signWebhook(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body.replace('2', '3')), base)
})

test('webhookHeaders are accepted by the standardwebhooks library, and a tampered body is refused', () => {
  const secret = 'whsec_' + Buffer.from('a secret of twenty-four!').toString('base64')
  const body = JSON.stringify({ event: 'Texto', text: 'olá, 🌍' })
  const headers = webhookHeaders(secret, 'msg_abc', body)
  assert.equal(new Webhook(secret).verify(body, headers), JSON.parse(body))
  assert.throws(() => new Webhook(secret).verify(body.replace('olá', 'ola'), headers))
})

test('webhookHeaders stamp the attempt time in whole seconds', () => {
  const headers = webhookHeaders(VECTOR.secret, VECTOR.id, VECTOR.body, 1614265330_999)
  assert.is(headers['webhook-timestamp'], '1614265330')
  assert.is(headers['webhook-signature'], VECTOR.signature)
  assert.is(headers['webhook-id'], VECTOR.id)
})

test.run()
