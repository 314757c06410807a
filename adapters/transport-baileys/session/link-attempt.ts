import { TransportError } from 'zapgate'
import type { LinkChallenge } from 'zapgate'
import { socketCall } from '../errors.ts'
import type { SocketLike } from '../types.ts'

/**
 * A pending link(): QR mode, or pairing-code mode for `phone` with the gateway's `code`. It settles once,
 * with the first challenge (the first QR, or the code once WhatsApp accepted it) or an error. After
 * `timeoutMs` without a challenge it calls `onTimeout` (which tears the link down) and fails.
 */
export class LinkAttempt {
  /** Whether the attempt has been resolved or rejected. */
  settled = false
  /** The challenge, for link() to return. */
  readonly promise: Promise<LinkChallenge>
  /** Pairing-code mode: whether the code was requested from WhatsApp (a later socket cannot take it over). */
  requested = false
  private settle!: { resolve(challenge: LinkChallenge): void; reject(error: Error): void }
  private readonly timer: NodeJS.Timeout

  constructor(
    /** Phone (digits) that enters the pairing code; undefined in QR mode. */
    readonly phone: string | undefined,
    /** The pairing code chosen by the gateway; undefined in QR mode. */
    readonly code: string | undefined,
    timeoutMs: number,
    onTimeout: () => Promise<void>,
  ) {
    this.promise = new Promise<LinkChallenge>((resolve, reject) => (this.settle = { resolve, reject }))
    this.promise.catch(() => undefined) // a rejection nobody awaits (link() already returned) is not unhandled
    this.timer = setTimeout(() => {
      void onTimeout()
        .catch(() => undefined)
        .finally(() => this.reject(new TransportError('timeout', `no link challenge within ${timeoutMs} ms`)))
    }, timeoutMs)
  }

  /**
   * A QR from the linking socket. QR mode: the first one settles the attempt, later ones are refreshes
   * (answers true: report it). Pairing-code mode: the first one is the moment to request the code
   * (after the handshake, before registration); QRs are never reported. Throws when WhatsApp refuses the code.
   */
  async onQr(socket: SocketLike, qr: string, timeoutMs: number): Promise<boolean> {
    if (this.code === undefined) {
      if (this.settled) return true
      this.resolve({ kind: 'qr', qr })
      return false
    }
    if (this.requested) return false
    this.requested = true
    const code = await socketCall('pairing code', timeoutMs, () => socket.requestPairingCode(this.phone!, this.code))
    this.resolve({ kind: 'code', code: code || this.code })
    return false
  }

  /** Settle with the challenge (ignored once settled). */
  resolve(challenge: LinkChallenge): void {
    if (this.settled) return
    this.settled = true
    clearTimeout(this.timer)
    this.settle.resolve(challenge)
  }

  /** Settle with an error (ignored once settled). */
  reject(error: Error): void {
    if (this.settled) return
    this.settled = true
    clearTimeout(this.timer)
    this.settle.reject(error)
  }
}
