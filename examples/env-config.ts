import type { GatewayOptions } from 'zapgate'

/**
 * Reading the standalone server's environment into gateway options: the text forms of the options
 * that are not plain strings or numbers, and the log redaction of its pino logger. A host app
 * configured another way does not need any of it.
 */

/** Read a comma-separated list of delays in ms (`GATEWAY_WEBHOOK_RETRY_MS`); throws a clear Error on bad input. */
export function parseRetrySchedule(text: string): number[] {
  const parts = text.split(',').map(part => part.trim())
  if (parts.some(part => !/^\d+$/.test(part))) {
    throw new Error(`webhook retry delays must be comma-separated milliseconds, e.g. 5000,300000 (got ${JSON.stringify(text)})`)
  }
  return parts.map(Number)
}

/** The longest time a Node timer waits for, 2^31 - 1 ms (24.8 days): setTimeout fires at once past it. */
export const TIMER_MAX_MS = 2 ** 31 - 1

/** Read a whole number of milliseconds from `min` to `max` (default 0 to TIMER_MAX_MS) from the variable `name`; throws a clear Error naming it on bad input. */
export function parseMs(text: string, name: string, { min = 0, max = TIMER_MAX_MS } = {}): number {
  return wholeNumber(text, name, 'milliseconds', min, max)
}

/** Read a whole count from `min` to `max` (default 1 to Number.MAX_SAFE_INTEGER) from the variable `name`; throws a clear Error naming it on bad input. */
export function parseCount(text: string, name: string, { min = 1, max = Number.MAX_SAFE_INTEGER } = {}): number {
  return wholeNumber(text, name, '', min, max)
}

/** `GATEWAY_SIM_LOG_LIMIT` (`npm start` on the memory transport, `npm run sim`): unset or empty is the network's default; at most 10 million, the log living in the process's memory (that is already gigabytes). */
export function simLogLimit(text: string | undefined): { logLimit?: number } {
  return text ? { logLimit: parseCount(text, 'GATEWAY_SIM_LOG_LIMIT', { max: 10_000_000 }) } : {}
}

/** `text` as a whole number from `min` to `max`: digits only (no sign, fraction or exponent), else an Error naming the variable and the range. */
function wholeNumber(text: string, name: string, unit: string, min: number, max: number): number {
  const value = /^\s*\d+\s*$/.test(text) ? Number(text) : NaN
  if (!(value >= min && value <= max))
    throw new Error(`${name} must be a whole number${unit ? ` of ${unit}` : ''} from ${min} to ${max} (got ${JSON.stringify(text)})`)
  return value
}

/** Read a TCP port (0 to 65535) from the variable `name`; unset or empty is `fallback` (as for the other variables). Throws a clear Error on anything else. */
export function parsePort(text: string | undefined, fallback: number, name = 'PORT'): number {
  if (text === undefined || text.trim() === '') return fallback
  if (!/^\s*\d+\s*$/.test(text) || Number(text) > 65535) throw new Error(`${name} must be a port number from 0 to 65535 (got ${JSON.stringify(text)})`)
  return Number(text)
}

/** The pino level from `LOG_LEVEL`: unset or empty is info; an unknown level throws a clear Error (pino's own names neither the variable nor the levels). */
export function logLevel(text: string | undefined): string {
  const level = text?.trim().toLowerCase() || 'info'
  const known = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
  if (!known.includes(level)) throw new Error(`LOG_LEVEL must be one of ${known.join(', ')} (got ${JSON.stringify(text)})`)
  return level
}

/** Read a whole number of megabytes, 1 to MAX_MEGABYTES, from the variable `name`, as bytes. */
export function parseMegabytes(text: string, name: string): number {
  return wholeNumber(text, name, 'megabytes', 1, MAX_MEGABYTES) * 1024 * 1024
}

/** The most megabytes a budget may name: 1 TiB (past it the byte count is no longer exact). */
const MAX_MEGABYTES = 1024 * 1024

/**
 * Koa's proxy settings from `GATEWAY_TRUST_PROXY`: unset or 0, the header X-Forwarded-For is
 * ignored; n, the server is behind n proxies and only the last n addresses of the header are
 * trusted (`maxIpsCount`), so a client cannot choose its own IP by sending the header itself.
 */
export function trustProxy(text: string | undefined): { proxy: boolean; maxIpsCount?: number } {
  if (text === undefined || text.trim() === '') return { proxy: false }
  if (!/^\s*\d+\s*$/.test(text))
    throw new Error(`GATEWAY_TRUST_PROXY must be the number of proxies in front of the server, e.g. 1 (got ${JSON.stringify(text)})`)
  // Any spelling of 0 (`00`) is off: Koa reads maxIpsCount 0 as "every address", the client's own first one included.
  return Number(text) === 0 ? { proxy: false } : { proxy: true, maxIpsCount: Number(text) }
}

/** An on/off variable (`GATEWAY_DOCS`, `GATEWAY_METRICS`, …): `1`/`true`/`on`, `0`/`false`/`off`, unset or empty the default; anything else refused, naming it. */
export function parseFlag(text: string | undefined, name: string, fallback: boolean): boolean {
  const value = text?.trim().toLowerCase() ?? ''
  if (value === '') return fallback
  if (['1', 'true', 'on', 'yes'].includes(value)) return true
  if (['0', 'false', 'off', 'no'].includes(value)) return false
  throw new Error(`${name} must be 1 or 0 (true/false, on/off), got ${JSON.stringify(text)}`)
}

/** `GATEWAY_BASE_URL`: unset or empty, none (each request's origin); else an absolute http(s) URL, refused otherwise (links made from it would not open). */
export function parseBaseUrl(text: string | undefined): string | undefined {
  if (text === undefined || text.trim() === '') return undefined
  const url = URL.canParse(text.trim()) ? new URL(text.trim()) : undefined
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash)
    throw new Error(`GATEWAY_BASE_URL must be an absolute http:// or https:// URL without query (got ${JSON.stringify(text)})`)
  return text.trim()
}

/** Read `off` or `<points>/<seconds>` (`GATEWAY_RATE_LIMIT`): the per-account request limit. */
export function parseRateLimit(text: string): GatewayOptions['rateLimit'] {
  const value = text.trim().toLowerCase()
  if (value === 'off' || value === '0' || value === 'false') return false
  const match = /^(\d+)\s*\/\s*(\d+)$/.exec(value)
  if (!match || Number(match[1]) <= 0 || Number(match[2]) <= 0)
    throw new Error(`rate limit ${JSON.stringify(text)}: write off or <points>/<seconds>, e.g. 6000/60`)
  return { perAccount: { points: Number(match[1]), duration: Number(match[2]) } }
}

/**
 * Log redaction: the gateway itself never logs a request or response body (only paths, ids and
 * errors), but a host's request logger may. These are the fields that must never reach a log in
 * clear, and the pino `redact` paths that censor them up to three levels deep (`authkey`,
 * `body.authkey`, `req.body.authkey`, `res.body.data.authkey`):
 *
 *   pino({ redact: { paths: redactPaths, censor: '[redacted]' } })
 */
/** Wire and option fields that hold secrets: passwords, account and device keys, signing secrets, OTP and pairing codes, QR data and share links. */
export const secretFields = [
  'senha',
  'password',
  'authkey',
  'appkey',
  'setAppkey',
  'webhookSecret',
  'otpSecret',
  'verificarOTP',
  'qrcode',
  'qr',
  'link',
  'token',
  'authorization',
  'cookie',
] as const

/**
 * pino/fast-redact paths censoring every secret field at the top level and up to three levels
 * deep, plus `code` (the pairing code) where a body carries it. `err.code` (ECONNREFUSED...) is
 * left alone: it is what an operator needs.
 */
export const redactPaths: string[] = [
  ...secretFields.flatMap(field => [field, `*.${field}`, `*.*.${field}`, `*.*.*.${field}`]),
  ...['body.code', '*.body.code', 'data.code', 'response.code', 'res.code', 'answer.code'],
]

/** The store when GATEWAY_STORE is unset (`npm start` and `npm run accounts` alike): one file per network, never mixing real WhatsApp sessions with others; a peer in the process (`local`) forgets its devices when it stops, so its store does too. */
export function defaultStore(transportName: string, waPeer: string | undefined): string {
  if (transportName === 'memory') return 'sqlite://./data/gateway-memory.sqlite'
  if (waPeer === 'local') return 'memory://'
  return waPeer ? 'sqlite://./data/gateway-wa-peer.sqlite' : 'sqlite://./data/gateway.sqlite'
}

/** `GATEWAY_TIME_ZONE`: an IANA zone the runtime knows (`America/Sao_Paulo`), else the start stops naming the variable. */
export function parseTimeZone(text: string): string {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: text.trim() })
    return text.trim()
  } catch {
    throw new Error(`GATEWAY_TIME_ZONE must be an IANA time zone such as America/Sao_Paulo (got ${JSON.stringify(text)})`)
  }
}
