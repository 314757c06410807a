/** The subset of a pino logger the gateway uses; any pino-compatible logger fits. */
export interface Logger {
  debug(obj: object | string, msg?: string): void
  info(obj: object | string, msg?: string): void
  warn(obj: object | string, msg?: string): void
  error(obj: object | string, msg?: string): void
  child?(bindings: Record<string, unknown>): Logger
}

/** A logger that drops everything (the library default: hosts pass their own). */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
}

/** A child logger when the logger supports it, else the logger itself. */
export function childLogger(logger: Logger, bindings: Record<string, unknown>): Logger {
  return logger.child ? logger.child(bindings) : logger
}
