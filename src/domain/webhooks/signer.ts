import { createHmac, timingSafeEqual } from 'node:crypto'

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

/**
 * Check a webhook the gateway sent, as a receiver: the `webhook-signature` (any of its space-separated
 * `v1,` signatures) over `${webhook-id}.${webhook-timestamp}.${body}` with the device's secret,
 * compared in constant time, and a timestamp within `toleranceSeconds` (default 300) of now. `body`
 * is the raw request body, before any JSON parsing.
 */
export function verifyWebhook(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  body: string | Buffer,
  options: { toleranceSeconds?: number; now?: number } = {},
): boolean {
  const header = (name: string) => {
    const value = headers[name] ?? headers[name.toLowerCase()]
    return Array.isArray(value) ? value[0] : value
  }
  const id = header('webhook-id')
  const timestamp = Number(header('webhook-timestamp'))
  const signatures = header('webhook-signature')
  if (!id || !signatures || !Number.isInteger(timestamp)) return false
  const now = Math.floor((options.now ?? Date.now()) / 1000)
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? 300)) return false
  const expected = Buffer.from(signWebhook(secret, id, timestamp, Buffer.isBuffer(body) ? body.toString('utf8') : body))
  return signatures.split(' ').some(signature => {
    const given = Buffer.from(signature)
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
}
