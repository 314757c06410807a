import type { SocketConfig } from '@whiskeysockets/baileys'
import { childLogger } from 'zapgate/adapter-kit'
import type { Logger } from 'zapgate'
import type { BaileysLogLevel } from './options.ts'

/** Baileys' logger interface (ILogger is not exported by the package root). */
export type BaileysLogger = SocketConfig['logger']

/**
 * A Baileys logger writing to the gateway's logger, dropping everything below `level` (Baileys logs a
 * lot at info and below). Baileys' trace goes out as debug. The stream error 515 (restart required),
 * which WhatsApp sends after every successful link, is logged by Baileys as an error: it goes out at
 * info, so that a link does not look like a failure in the host's logs.
 */
export function baileysLogger(logger: Logger, level: BaileysLogLevel): BaileysLogger {
  const min = LEVELS[level]
  const make = (target: Logger): BaileysLogger => ({
    level,
    child: bindings => make(childLogger(target, bindings)),
    trace: (obj, msg) => min <= LEVELS.trace && target.debug(shape(obj), msg),
    debug: (obj, msg) => min <= LEVELS.debug && target.debug(shape(obj), msg),
    info: (obj, msg) => min <= LEVELS.info && target.info(shape(obj), msg),
    warn: (obj, msg) => min <= LEVELS.warn && target.warn(shape(obj), msg),
    error: (obj, msg) =>
      isRestartRequired(obj, msg) ? min <= LEVELS.info && target.info(shape(obj), msg) : min <= LEVELS.error && target.error(shape(obj), msg),
  })
  return make(childLogger(logger, { module: 'baileys' }))
}

// --- Internal helpers ---

const LEVELS: Record<BaileysLogLevel, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, silent: Infinity }

function isRestartRequired(obj: unknown, msg: unknown): boolean {
  const node = (obj as { fullErrorNode?: { tag?: unknown; attrs?: { code?: unknown } } } | null)?.fullErrorNode
  return msg === 'stream errored out' && node?.tag === 'stream:error' && node.attrs?.code === '515'
}

function shape(obj: unknown): object | string {
  return typeof obj === 'string' || (typeof obj === 'object' && obj !== null) ? obj : { value: obj }
}
