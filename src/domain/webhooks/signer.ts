import { createHmac } from 'node:crypto'

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): `v1,` + base64 of
 * HMAC-SHA256(key, `${id}.${timestamp}.${body}`), where the key is the bytes of the base64 text after
 * `whsec_`. Any Standard Webhooks library verifies what this signs.
 */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64')
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`
}

/**
 * The three Standard Webhooks headers of one attempt. The timestamp (seconds) is the attempt's own,
 * so a retry hours later still passes a receiver's freshness check; the id never changes.
 */
export function webhookHeaders(secret: string, id: string, body: string, now = Date.now()): Record<string, string> {
  const timestamp = Math.floor(now / 1000)
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(secret, id, timestamp, body),
  }
}
