import { createHmac, timingSafeEqual } from 'node:crypto'

/** Standard Webhooks signing (docs/api.md#headers-and-signature): `v1,` + base64 of HMAC-SHA256 over `${id}.${timestamp}.${body}`, keyed by the bytes of the base64 text after `whsec_`. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64')
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`
}

/** The headers of one attempt: `content-type` (a host's sender POSTs them as is) and the three Standard Webhooks ones; the timestamp is the attempt's own (a late retry stays fresh; freshWebhookHeaders signs again after a wait in the sender's queue), the id never changes. */
export function webhookHeaders(secret: string, id: string, body: string, now = Date.now()): Record<string, string> {
  const timestamp = Math.floor(now / 1000)
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(secret, id, timestamp, body),
  }
}

/** `headers` when their timestamp is this second's, else the same headers signed now: what a sender POSTs after a wait in its queue (a timestamp over 5 minutes old is refused by a standard verifier). */
export function freshWebhookHeaders(headers: Record<string, string>, secret: string, id: string, body: string, now = Date.now()): Record<string, string> {
  return Number(headers['webhook-timestamp']) === Math.floor(now / 1000) ? headers : webhookHeaders(secret, id, body, now)
}

/** Check a webhook the gateway sent, as a receiver: any `v1,` signature of `webhook-signature` over the raw `body` with the device's secret (constant-time compare), and a timestamp within `toleranceSeconds` (default 300) of now. Header names in any case, as HTTP has them (before, only lower case: `Webhook-Id` from a proxy that canonicalises names was refused). */
export function verifyWebhook(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  body: string | Buffer,
  options: { toleranceSeconds?: number; now?: number } = {},
): boolean {
  const header = (name: string) => [headers[name] ?? headers[Object.keys(headers).find(key => key.toLowerCase() === name) ?? name]].flat()[0]
  const id = header('webhook-id')
  const timestamp = Number(header('webhook-timestamp'))
  const signatures = header('webhook-signature')
  if (!id || !signatures || !Number.isInteger(timestamp)) return false
  if (Math.abs(Math.floor((options.now ?? Date.now()) / 1000) - timestamp) > (options.toleranceSeconds ?? 300)) return false
  const expected = Buffer.from(signWebhook(secret, id, timestamp, Buffer.isBuffer(body) ? body.toString('utf8') : body))
  return signatures.split(' ').some(signature => {
    const given = Buffer.from(signature)
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
}
