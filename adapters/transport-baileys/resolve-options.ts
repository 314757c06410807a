import { checkOptions } from './options-check.ts'
import type { BaileysTransportOptions, ResolvedOptions } from './options.ts'

/** Check the options (TypeError naming the option when one is unknown or of the wrong type) and fill in the defaults. */
export function resolveOptions(options: BaileysTransportOptions = {}): ResolvedOptions {
  checkOptions(options)
  const print = options.printQrInTerminal
  return {
    socketFactory: options.socketFactory,
    resolveVersion: options.resolveVersion,
    downloadMedia: options.downloadMedia,
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
    socketConfig: options.socketConfig ?? {},
  }
}
