import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createHmac } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { verifyWebhook } from '../../../src/index.ts'

const test = suite('verifyWebhook, the receiver-side check zapgate exports')

const SECRET = 'whsec_' + Buffer.from('a secret of twenty-four!').toString('base64')
const BODY = JSON.stringify({ event: 'Texto', text: 'Olá 👍🏽' })
const NOW = 1_700_000_000_000

/** Standard Webhooks headers, signed from the published algorithm alone (not the gateway's signer). */
function signed(id = 'msg_abc', timestamp = Math.floor(NOW / 1000), body = BODY): Record<string, string> {
  const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64')
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64')
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${signature}` }
}

/** The standardwebhooks library's verdict. */
function library(headers: Record<string, string>, body = BODY): boolean {
  try {
    new Webhook(SECRET).verify(body, headers)
    return true
  } catch {
    return false
  }
}

test('a genuine delivery verifies, as a string or as the raw bytes, and any v1 signature of the list may match', () => {
  const headers = signed()
  assert.ok(verifyWebhook(SECRET, headers, BODY, { now: NOW }))
  assert.ok(verifyWebhook(SECRET, headers, Buffer.from(BODY), { now: NOW }))
  assert.ok(verifyWebhook(SECRET, { ...headers, 'webhook-signature': `v1,bm90IGl0 ${headers['webhook-signature']}` }, BODY, { now: NOW }))
})

test('a forged body, id or stale timestamp is refused', () => {
  assert.not.ok(verifyWebhook(SECRET, signed(), BODY.replace('Olá', 'Ola'), { now: NOW }))
  assert.not.ok(verifyWebhook(SECRET, { ...signed(), 'webhook-id': 'msg_other' }, BODY, { now: NOW }))
  assert.not.ok(verifyWebhook(SECRET, signed(), BODY, { now: NOW + 301_000 }))
})

test('header names are case-insensitive (RFC 9110), as the standardwebhooks library reads them', () => {
  const lower = signed('msg_abc', Math.floor(Date.now() / 1000)) // the library reads the clock
  // As a proxy that canonicalises names (Go's net/http does), or a serverless platform that keeps the sender's case, hands them on.
  const canonical = { 'Webhook-Id': lower['webhook-id'], 'Webhook-Timestamp': lower['webhook-timestamp'], 'Webhook-Signature': lower['webhook-signature'] }
  const shouting = Object.fromEntries(Object.entries(lower).map(([name, value]) => [name.toUpperCase(), value]))
  for (const headers of [canonical, shouting]) {
    assert.ok(library(headers), 'the standard library accepts them')
    assert.ok(verifyWebhook(SECRET, headers, BODY), `verifyWebhook accepts ${Object.keys(headers).join(', ')}`)
  }
})

test.run()
