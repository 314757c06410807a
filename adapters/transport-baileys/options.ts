import type { SocketConfig, WABrowserDescription, WAVersion } from '@whiskeysockets/baileys'
import { parseProxyUrl, type ProxyOption } from './proxy.ts'
import type { MediaDownloader, SocketFactory } from './types.ts'

/**
 * The Baileys transport's options in one place: their types, their defaults (resolveOptions) and the
 * checks that refuse an unknown or mistyped one (checkOptions).
 */

/** Log levels for Baileys' own (chatty) logging. */
export type BaileysLogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'silent'

/** Reconnection back-off after an unexpected close: `initialDelayMs * factor^attempt`, capped, with jitter. */
export interface ReconnectOptions {
  /** First delay (default 1 s). */
  initialDelayMs?: number
  /** Cap (default 60 s). */
  maxDelayMs?: number
  /** Growth per attempt (default 2). */
  factor?: number
  /** Random spread, a fraction of the delay either way (default 0.2). */
  jitter?: number
  /** A connection open at least this long resets the back-off (default 60 s). */
  stableAfterMs?: number
}

/** The `proxy` option's type lives beside its reading (proxy.ts, proxyUrlFor); re-exported here with the other option types. */
export type { ProxyOption }

/** Options of the Baileys transport. Every one has a default; an unknown or mistyped one is an error. */
export interface BaileysTransportOptions {
  /** Creates a device's socket. Default: Baileys' makeWASocket, imported lazily. Tests pass a fake. */
  socketFactory?: SocketFactory
  /**
   * The WhatsApp Web version to announce. Default: `WA_VERSION` from the environment (`2.3000.1234567890`),
   * else the current one read from web.whatsapp.com (5 s timeout, through the proxy), else Baileys' bundled one.
   */
  resolveVersion?: () => Promise<WAVersion | undefined>
  /** Downloads received media. Default: the adapter's own download (MAC checked, re-upload requested on 404/410), a stream for `downloadMedia` (GET /media/:token); through the proxy when there is one, else through `socketConfig.fetchAgent` when given (the agent uploads go through). */
  downloadMedia?: MediaDownloader
  /**
   * Hosts (`host[:port]`, as in a URL) the default downloader may fetch received media from besides
   * WhatsApp's own (https on `*.whatsapp.net`), e.g. a local peer's media host. A message pointing
   * anywhere else (its URL is its sender's word) is reported with metadata only. Default none.
   */
  mediaHosts?: string[]
  /** Print each QR in the terminal: true for stdout, or a stream to write to. Default false. */
  printQrInTerminal?: boolean | { write(text: string): unknown }
  /**
   * Received media up to this size carries its bytes as base64 in the message event (default 5 MB).
   * Larger media carries its metadata only; the host fetches the bytes with `downloadMedia(deviceId, id)`.
   */
  inlineMediaMaxBytes?: number
  /** Buttons and carousels as WhatsApp interactive messages (default) or as numbered plain text. */
  buttonsFallback?: 'interactive' | 'text'
  /** A send (or group call) that has not completed after this long fails with TransportError('timeout') and restarts the socket. Default 60 s. */
  sendTimeoutMs?: number
  /** How long link() waits for the first QR from WhatsApp. Default 30 s. */
  linkTimeoutMs?: number
  /** A socket that has neither opened nor shown a QR after this long is closed and retried with back-off. Default 30 s. */
  openTimeoutMs?: number
  /** Back-off of automatic reconnects. */
  reconnect?: ReconnectOptions
  /** Level of Baileys' own logs, written to the gateway's logger. Default 'warn'. At 'trace' and 'debug' Baileys logs whole frames (pairing refs, stanzas): not for production logs. */
  baileysLogLevel?: BaileysLogLevel
  /** How long keys of sent and received messages are remembered (for delete, react, read, downloads). Default 7 days. */
  messageTtlMs?: number
  /** Browser announced to WhatsApp (shown on the phone's linked devices). Default Ubuntu / Chrome. */
  browser?: WABrowserDescription
  /**
   * Proxy for everything that goes to WhatsApp: the socket, media uploads and downloads, the version
   * lookup. A URL for every device, or a function answering one per device (undefined: direct).
   */
  proxy?: ProxyOption
  /** ffmpeg for voice notes that are not OGG/Opus yet (default `ffmpeg` on the PATH); false: never transcode. */
  ffmpegPath?: string | false
  /** At start(), check in the background that WhatsApp can be reached and log the outcome (default false; the standalone server turns it on). */
  checkReachability?: boolean
  /**
   * libsignal (Baileys' encryption) prints whole session records, chain keys and private keys included,
   * with console.info/warn/error. While the transport runs, send exactly those messages to the gateway's
   * logger at debug, as text only; every other console call is untouched. Default true; false leaves
   * the console alone (libsignal's lines then reach stdout/stderr).
   */
  quietSignalLogs?: boolean
  /** Further Baileys socket options (e.g. `connectTimeoutMs`). The adapter's own settings win. */
  socketConfig?: Partial<Omit<SocketConfig, 'auth' | 'logger' | 'getMessage' | 'cachedGroupMetadata' | 'version' | 'shouldIgnoreJid'>>
}

/** Options with defaults filled in (factory, version and downloader are filled once Baileys is loaded). */
export interface ResolvedOptions {
  socketFactory?: SocketFactory
  resolveVersion?: () => Promise<WAVersion | undefined>
  downloadMedia?: MediaDownloader
  mediaHosts: readonly string[]
  qrOutput?: { write(text: string): unknown }
  inlineMediaMaxBytes: number
  buttonsFallback: 'interactive' | 'text'
  sendTimeoutMs: number
  linkTimeoutMs: number
  openTimeoutMs: number
  reconnect: Required<ReconnectOptions>
  baileysLogLevel: BaileysLogLevel
  messageTtlMs: number
  browser?: WABrowserDescription
  proxy?: ProxyOption
  ffmpegPath: string | false
  checkReachability: boolean
  quietSignalLogs: boolean
  socketConfig: Partial<SocketConfig>
}

/** Check the options (TypeError naming the option when one is unknown or of the wrong type) and fill in the defaults. */
export function resolveOptions(options: BaileysTransportOptions = {}): ResolvedOptions {
  checkOptions(options)
  const print = options.printQrInTerminal
  return {
    socketFactory: options.socketFactory,
    resolveVersion: options.resolveVersion,
    downloadMedia: options.downloadMedia,
    mediaHosts: options.mediaHosts ?? [],
    qrOutput: print === true ? process.stdout : print ? print : undefined,
    inlineMediaMaxBytes: options.inlineMediaMaxBytes ?? 5 * 1024 * 1024,
    buttonsFallback: options.buttonsFallback ?? 'interactive',
    sendTimeoutMs: options.sendTimeoutMs ?? 60_000,
    linkTimeoutMs: options.linkTimeoutMs ?? 30_000,
    openTimeoutMs: options.openTimeoutMs ?? 30_000,
    reconnect: {
      initialDelayMs: options.reconnect?.initialDelayMs ?? 1_000,
      maxDelayMs: options.reconnect?.maxDelayMs ?? 60_000,
      factor: options.reconnect?.factor ?? 2,
      jitter: options.reconnect?.jitter ?? 0.2,
      stableAfterMs: options.reconnect?.stableAfterMs ?? 60_000,
    },
    baileysLogLevel: options.baileysLogLevel ?? 'warn',
    messageTtlMs: options.messageTtlMs ?? 7 * 24 * 3600_000,
    browser: options.browser,
    proxy: options.proxy,
    ffmpegPath: options.ffmpegPath ?? 'ffmpeg',
    checkReachability: options.checkReachability ?? false,
    quietSignalLogs: options.quietSignalLogs ?? true,
    socketConfig: options.socketConfig ?? {},
  }
}

type Check = (value: unknown) => string | undefined

/**
 * Refuse options the adapter would otherwise ignore or misread: an unknown name (a typo such as
 * `sendTimeOutMs` silently kept the default), a value of the wrong type or range, a malformed proxy
 * URL, or a `socketConfig` key the adapter sets itself. Throws a TypeError naming the option.
 */
function checkOptions(options: unknown): void {
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
  mediaHosts: v => (Array.isArray(v) && v.every(host => typeof host === 'string' && host !== '') ? undefined : 'must be a list of host names'),
  printQrInTerminal: v =>
    typeof v === 'boolean' || (isObject(v) && typeof v.write === 'function') ? undefined : 'must be true, false or a stream with write()',
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
  quietSignalLogs: v => (typeof v === 'boolean' ? undefined : 'must be true or false'),
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
