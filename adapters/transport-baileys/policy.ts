import type { ReconnectOptions } from './options.ts'

/** Baileys' DisconnectReason codes (and the failures WhatsApp reports with the same numbers). */
export const CloseCode = {
  loggedOut: 401,
  paymentRequired: 402,
  forbidden: 403,
  outdatedVersion: 405,
  notAcceptable: 406,
  timedOut: 408,
  multideviceMismatch: 411,
  connectionClosed: 428,
  connectionReplaced: 440,
  badSession: 500,
  unavailableService: 503,
  restartRequired: 515,
} as const

/**
 * Why a socket ended, read from the error Baileys closed it with (or the adapter's own markers):
 * `network` when WhatsApp could not be reached or stopped answering at the transport level, `qr-expired`
 * when the QR references ran out, `code` for a status WhatsApp (or Baileys) gave, `none` for a plain
 * close without a code.
 */
export type CloseCause = { kind: 'network'; reason: string } | { kind: 'qr-expired' } | { kind: 'code'; code: number } | { kind: 'none' }

/**
 * The adapter's own reason to end a socket that WhatsApp never opened (the watchdog, a refused
 * WebSocket upgrade): a plain Error, never a Boom, so that an HTTP 401, 403 or 440 from a proxy can
 * not be taken for WhatsApp's "logged out", "forbidden" or "replaced".
 */
export class ConnectionProblem extends Error {
  constructor(readonly reason: string) {
    super(reason)
    this.name = 'ConnectionProblem'
  }
}

/**
 * Read a close error the way Baileys builds them. Its `getCodeFromWSError` gives every connect-level
 * failure (ENOTFOUND, ECONNREFUSED, ECONNRESET, ETIMEDOUT, "Opening handshake has timed out") the
 * code 408, the same as "QR refs attempts ended" and a lost keep-alive, and wraps the ws error as
 * `Boom('WebSocket Error (<message>)', { data: <ws error> })`; the Noise handshake times out with
 * `Boom('Timed Out', 408)`. So the message and the wrapped error decide, not the code alone.
 */
export function closeCause(error: unknown): CloseCause {
  if (error instanceof ConnectionProblem) return { kind: 'network', reason: error.reason }
  if (!error) return { kind: 'none' }
  const message = error instanceof Error ? error.message : String(error)
  const code = statusCodeOf(error)
  if (message.startsWith('WebSocket Error (')) {
    const inner = (error as { data?: { code?: unknown; message?: unknown } }).data
    const detail = typeof inner?.message === 'string' && inner.message ? inner.message : message.slice(17, -1)
    return { kind: 'network', reason: `WhatsApp cannot be reached from this server (${detail})` }
  }
  if (code === CloseCode.timedOut && message === 'QR refs attempts ended') return { kind: 'qr-expired' }
  if (code === CloseCode.timedOut && message === 'Timed Out') return { kind: 'network', reason: 'WhatsApp did not answer the connection handshake in time' }
  return code === undefined ? { kind: 'none' } : { kind: 'code', code }
}

/** What to do after a socket closed that the adapter did not close quietly itself. */
export type CloseAction =
  /** 515 after linking: a new socket with the same auth, at once. */
  | { kind: 'restart' }
  /** 401: unlinked from the phone; wipe the auth state, report logged-out, never reconnect. */
  | { kind: 'logged-out' }
  /** 440: another client uses this session; report it, keep the credentials, do not fight back. */
  | { kind: 'replaced' }
  /** 402/403/406/411: the account cannot use the service; stop and report why. */
  | { kind: 'stop'; reason: string }
  /** The QR references ran out before the phone scanned one. */
  | { kind: 'link-expired' }
  /** Anything else: reconnect with back-off (after 405 with a freshly resolved version). */
  | { kind: 'reconnect'; outdatedVersion: boolean; unreachable: boolean }

/** The connection policy: the action for a socket that ended with `error`. */
export function closeAction(error: unknown, paired: boolean): CloseAction {
  const cause = closeCause(error)
  if (cause.kind === 'network') return { kind: 'reconnect', outdatedVersion: false, unreachable: true }
  if (cause.kind === 'qr-expired') return paired ? { kind: 'reconnect', outdatedVersion: false, unreachable: false } : { kind: 'link-expired' }
  const code = cause.kind === 'code' ? cause.code : undefined
  switch (code) {
    case CloseCode.restartRequired:
      return { kind: 'restart' }
    case CloseCode.loggedOut:
      return { kind: 'logged-out' }
    case CloseCode.connectionReplaced:
      return { kind: 'replaced' }
    case CloseCode.paymentRequired:
    case CloseCode.forbidden:
    case CloseCode.notAcceptable:
    case CloseCode.multideviceMismatch:
      return { kind: 'stop', reason: describeClose(error) }
    default:
      return { kind: 'reconnect', outdatedVersion: code === CloseCode.outdatedVersion, unreachable: false }
  }
}

/** A short English description of why a socket ended, for SessionStatus.reason and logs. */
export function describeClose(error: unknown): string {
  const cause = closeCause(error)
  if (cause.kind === 'network') return cause.reason
  if (cause.kind === 'qr-expired') return 'the QR codes expired'
  if (cause.kind === 'none') return 'connection ended'
  const known: Record<number, string> = {
    401: 'logged out from the phone',
    402: 'account blocked (402)',
    403: 'account forbidden (403)',
    405: 'WhatsApp refused the client version (405)',
    406: 'account not acceptable (406)',
    408: 'connection lost (408)',
    411: 'multi-device mismatch (411)',
    428: 'connection closed (428)',
    440: 'session replaced by another client (440)',
    500: 'bad session (500)',
    503: 'service unavailable (503)',
    515: 'restart required (515)',
  }
  return known[cause.code] ?? `connection closed (${cause.code})`
}

/** The HTTP-like status code of a Baileys (Boom) error, or undefined for a plain error or none. */
export function statusCodeOf(error: unknown): number | undefined {
  const code = (error as { output?: { statusCode?: unknown } } | undefined)?.output?.statusCode
  return typeof code === 'number' ? code : undefined
}

/** The delay before reconnect attempt `attempt` (0-based): exponential, capped, with jitter. */
export function backoffDelay(attempt: number, options: Required<ReconnectOptions>, random: () => number = Math.random): number {
  const base = Math.min(options.maxDelayMs, options.initialDelayMs * options.factor ** Math.min(attempt, 30))
  const spread = 1 + options.jitter * (random() * 2 - 1)
  return Math.max(0, Math.round(Math.min(options.maxDelayMs, base * spread)))
}
