import type { SocketConfig, WABrowserDescription, WAVersion } from '@whiskeysockets/baileys'
import type { MediaDownloader, SocketFactory } from './types.ts'

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

/** A proxy URL (`http://`, `https://`, `socks4://`, `socks5://`, with `user:password@` when needed), or one per device. */
export type ProxyOption = string | ((deviceId: string) => string | undefined)

/** Options of the Baileys transport. Every one has a default; an unknown or mistyped one is an error. */
export interface BaileysTransportOptions {
  /** Creates a device's socket. Default: Baileys' makeWASocket, imported lazily. Tests pass a fake. */
  socketFactory?: SocketFactory
  /**
   * The WhatsApp Web version to announce. Default: `WA_VERSION` from the environment (`2.3000.1234567890`),
   * else the current one read from web.whatsapp.com (5 s timeout, through the proxy), else Baileys' bundled one.
   */
  resolveVersion?: () => Promise<WAVersion | undefined>
  /** Downloads received media. Default: Baileys' downloadMediaMessage (re-upload requested on 404/410); through the proxy when there is one. */
  downloadMedia?: MediaDownloader
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
  /** Level of Baileys' own logs, written to the gateway's logger. Default 'warn'. */
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
  /** Further Baileys socket options (e.g. `connectTimeoutMs`). The adapter's own settings win. */
  socketConfig?: Partial<Omit<SocketConfig, 'auth' | 'logger' | 'getMessage' | 'cachedGroupMetadata' | 'version' | 'shouldIgnoreJid'>>
}

/** Options with defaults filled in (factory, version and downloader are filled once Baileys is loaded). */
export interface ResolvedOptions {
  socketFactory?: SocketFactory
  resolveVersion?: () => Promise<WAVersion | undefined>
  downloadMedia?: MediaDownloader
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
  socketConfig: Partial<SocketConfig>
}
