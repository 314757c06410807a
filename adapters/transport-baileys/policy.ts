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

/** What to do after a socket closed that the adapter did not close itself. */
export type CloseAction =
  /** 515 after linking: a new socket with the same auth, at once. */
  | { kind: 'restart' }
  /** 401: unlinked from the phone; wipe the auth state, report logged-out, never reconnect. */
  | { kind: 'logged-out' }
  /** 440: another client uses this session; report it and do not fight back. */
  | { kind: 'replaced' }
  /** 402/403/406/411: the account cannot use the service; stop and report why. */
  | { kind: 'stop'; reason: string }
  /** 408 before the link completed: the QR codes ran out. */
  | { kind: 'link-expired' }
  /** Anything else: reconnect with back-off (after 405 with a freshly resolved version). */
  | { kind: 'reconnect'; outdatedVersion: boolean }

/** The connection policy: the action for a close with `code` (undefined: not a Boom error). */
export function closeAction(code: number | undefined, paired: boolean): CloseAction {
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
      return { kind: 'stop', reason: describeClose(code) }
    case CloseCode.timedOut:
      return paired ? { kind: 'reconnect', outdatedVersion: false } : { kind: 'link-expired' }
    default:
      return { kind: 'reconnect', outdatedVersion: code === CloseCode.outdatedVersion }
  }
}

/** A short English description of a close code, for SessionStatus.reason and logs. */
export function describeClose(code: number | undefined): string {
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
  return code === undefined ? 'connection ended' : (known[code] ?? `connection closed (${code})`)
}

/** The delay before reconnect attempt `attempt` (0-based): exponential, capped, with jitter. */
export function backoffDelay(attempt: number, options: Required<ReconnectOptions>, random: () => number = Math.random): number {
  const base = Math.min(options.maxDelayMs, options.initialDelayMs * options.factor ** Math.min(attempt, 30))
  const spread = 1 + options.jitter * (random() * 2 - 1)
  return Math.max(0, Math.round(Math.min(options.maxDelayMs, base * spread)))
}
