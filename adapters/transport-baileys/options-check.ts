import type { BaileysTransportOptions } from './options.ts'
import { parseProxyUrl } from './proxy.ts'

type Check = (value: unknown) => string | undefined

/**
 * Refuse options the adapter would otherwise ignore or misread: an unknown name (a typo such as
 * `sendTimeOutMs` silently kept the default), a value of the wrong type or range, a malformed proxy
 * URL, or a `socketConfig` key the adapter sets itself. Throws a TypeError naming the option.
 */
export function checkOptions(options: unknown): void {
  if (options === undefined) return
  if (!isObject(options)) fail('the options must be an object')
  for (const [name, value] of Object.entries(options)) {
    const check = CHECKS[name as keyof BaileysTransportOptions]
    if (!check) fail(`unknown option "${name}"${suggestion(name, Object.keys(CHECKS))}`)
    if (value === undefined) continue
    const problem = check(value)
    // A problem with a nested key reads `.key must ...`: named as "option.key".
    const nested = problem?.startsWith('.') ? /^(\.\S+) (.*)$/.exec(problem) : undefined
    if (problem) fail(nested ? `option "${name}${nested[1]}" ${nested[2]}` : `option "${name}" ${problem}`)
  }
  const socket = options.socketConfig as Record<string, unknown> | undefined
  if (options.proxy !== undefined && (socket?.agent !== undefined || socket?.fetchAgent !== undefined)) {
    fail('give either "proxy" or socketConfig.agent/fetchAgent, not both')
  }
}

// --- Internal helpers ---

const positive: Check = v => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? undefined : 'must be a positive number (milliseconds or bytes)')
const fn: Check = v => (typeof v === 'function' ? undefined : 'must be a function')
const oneOf =
  (...values: string[]): Check =>
  v =>
    values.includes(v as string) ? undefined : `must be one of ${values.map(x => JSON.stringify(x)).join(', ')}`

const RECONNECT_KEYS = ['initialDelayMs', 'maxDelayMs', 'factor', 'jitter', 'stableAfterMs']
const ADAPTER_SOCKET_KEYS = ['auth', 'logger', 'getMessage', 'cachedGroupMetadata', 'version', 'shouldIgnoreJid']

const CHECKS: Record<keyof BaileysTransportOptions, Check> = {
  socketFactory: fn,
  resolveVersion: fn,
  downloadMedia: fn,
  printQrInTerminal: v => (typeof v === 'boolean' || (isObject(v) && typeof v.write === 'function') ? undefined : 'must be true, false or a stream with write()'),
  inlineMediaMaxBytes: v => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? undefined : 'must be a number of bytes (0 or more)'),
  buttonsFallback: oneOf('interactive', 'text'),
  sendTimeoutMs: positive,
  linkTimeoutMs: positive,
  openTimeoutMs: positive,
  reconnect: v => {
    if (!isObject(v)) return 'must be an object'
    for (const [key, value] of Object.entries(v)) {
      if (!RECONNECT_KEYS.includes(key)) return `has an unknown key "${key}"${suggestion(key, RECONNECT_KEYS)}`
      if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value) || value < 0)) return `.${key} must be a number (0 or more)`
    }
    return typeof v.factor === 'number' && v.factor < 1 ? '.factor must be at least 1' : undefined
  },
  baileysLogLevel: oneOf('trace', 'debug', 'info', 'warn', 'error', 'silent'),
  messageTtlMs: positive,
  browser: v => (Array.isArray(v) && v.length === 3 && v.every(part => typeof part === 'string') ? undefined : 'must be [os, browser, version], three strings'),
  proxy: v => {
    if (typeof v === 'function') return undefined
    if (typeof v !== 'string') return 'must be a proxy URL or a function (deviceId) => URL'
    return parseProxyUrl(v) ? undefined : 'must be an http://, https://, socks4:// or socks5:// URL'
  },
  ffmpegPath: v => (v === false || (typeof v === 'string' && v.trim() !== '') ? undefined : 'must be a path or false'),
  checkReachability: v => (typeof v === 'boolean' ? undefined : 'must be true or false'),
  socketConfig: v => {
    if (!isObject(v)) return 'must be an object'
    const taken = Object.keys(v).find(key => ADAPTER_SOCKET_KEYS.includes(key))
    return taken ? `may not set "${taken}": the adapter sets it` : undefined
  },
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function fail(message: string): never {
  throw new TypeError(`baileysTransport: ${message}`)
}

/** ` (did you mean "x"?)` for the closest known name, when one is close. */
function suggestion(name: string, known: string[]): string {
  let best: string | undefined
  let bestDistance = Infinity
  for (const candidate of known) {
    const [a, b] = [name.toLowerCase(), candidate.toLowerCase()]
    const distance = a.startsWith(b) || b.startsWith(a) ? 1 : editDistance(a, b)
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance]
  }
  return best && bestDistance <= Math.max(2, Math.floor(name.length / 4)) ? ` (did you mean "${best}"?)` : ''
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    previous = current
  }
  return previous[b.length]
}
