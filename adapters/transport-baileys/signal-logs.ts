import type { Logger } from 'zapgate'

/**
 * libsignal (which Baileys uses for end-to-end encryption) prints straight to the console, and several
 * of its messages carry whole session records, chain keys and ratchet private keys included
 * ("Closing session:", session). A host shipping stdout to a log service would ship its devices'
 * Signal secrets. While a Baileys transport runs, a narrow console filter sends exactly libsignal's
 * messages (recognised by method and fixed first argument) to the transport's logger at debug, as text
 * only; every other console call passes through untouched. Installed once per process and removed
 * when the last transport that asked for it releases it, so an embedding app's console is left as it was.
 */

type Method = 'info' | 'warn' | 'error'

/** libsignal's console messages (node_modules/libsignal/src, libsignal 2.0.1 as Baileys 7.0.0-rc14 pins it), by method. */
const SIGNAL_MESSAGES: Record<Method, readonly string[]> = {
  info: ['Closing session:', 'Opening session:', 'Removing old closed session:', 'Migrating session to:'],
  warn: [
    'Session already closed',
    'Session already open',
    'Closing open session in favor of incoming prekey bundle',
    'Decrypted message with closed session.',
    'Unhandled bucket type (for naming):',
  ],
  error: [
    'V1 session storage migration error: registrationId',
    'Failed to decrypt message with any known session...',
    'WARNING: Expected pubkey of length 33, please report the ST and client that generated the pubkey',
  ],
}

/** session_cipher's `console.error("Session error:" + e, e.stack)`: the first argument is built from the error. */
const SESSION_ERROR = 'Session error:'

/**
 * Route libsignal's console messages to `logger` (debug, message text only) until the returned
 * function is called. Reference-counted: the console is patched by the first holder and restored
 * when the last one releases. With several holders, the earliest still holding receives the messages.
 */
export function quietSignalLogs(logger: Logger): () => void {
  const holder = { logger }
  holders.push(holder)
  if (holders.length === 1) install()
  let released = false
  return () => {
    if (released) return
    released = true
    holders.splice(holders.indexOf(holder), 1)
    if (holders.length === 0) uninstall()
  }
}

/** The text to log for a console call when it is one of libsignal's messages, else undefined. */
export function signalMessage(method: Method, args: readonly unknown[]): string | undefined {
  const [first] = args
  if (typeof first !== 'string') return undefined
  if (SIGNAL_MESSAGES[method].includes(first)) return first
  // "Session error:" + e, then e.stack: keep the error's message (first line), never the stack.
  if (method === 'error' && first.startsWith(SESSION_ERROR) && args.length <= 2 && (args[1] === undefined || typeof args[1] === 'string')) {
    return first.split('\n', 1)[0]
  }
  return undefined
}

// --- Internal helpers ---

const holders: { logger: Logger }[] = []
const METHODS: Method[] = ['info', 'warn', 'error']
/** The console's methods before the filter, and the filter's own, per method (while installed). */
let patched: { method: Method; original: (...args: unknown[]) => void; filter: (...args: unknown[]) => void }[] = []

function install(): void {
  patched = METHODS.map(method => {
    const original = console[method]
    const filter = (...args: unknown[]): void => {
      const text = holders.length > 0 ? signalMessage(method, args) : undefined
      if (text === undefined) return original.apply(console, args)
      holders[0].logger.debug({ module: 'libsignal', source: `console.${method}` }, text)
    }
    console[method] = filter
    return { method, original, filter }
  })
}

function uninstall(): void {
  for (const { method, original, filter } of patched) {
    // Someone wrapped the console after us: leave their wrapper (ours passes everything through now).
    if (console[method] === filter) console[method] = original
  }
  patched = []
}
