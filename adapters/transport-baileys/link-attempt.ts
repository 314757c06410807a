import { TransportError } from '../../src/ports/transport.ts'
import type { LinkChallenge } from '../../src/ports/transport.ts'

/**
 * A pending link(): settled once with the first challenge (QR or accepted pairing code) or an error.
 * After `timeoutMs` without a challenge it calls `onTimeout` (which tears the link down) and fails.
 */
export class LinkAttempt {
  /** Whether the attempt has been resolved or rejected. */
  settled = false
  /** The challenge, for link() to return. */
  readonly promise: Promise<LinkChallenge>
  private settle!: { resolve(challenge: LinkChallenge): void; reject(error: Error): void }
  private readonly timer: NodeJS.Timeout

  constructor(timeoutMs: number, onTimeout: () => Promise<void>) {
    this.promise = new Promise<LinkChallenge>((resolve, reject) => (this.settle = { resolve, reject }))
    this.promise.catch(() => undefined) // a rejection nobody awaits (link() already returned) is not unhandled
    this.timer = setTimeout(() => {
      void onTimeout()
        .catch(() => undefined)
        .finally(() => this.reject(new TransportError('timeout', `no link challenge within ${timeoutMs} ms`)))
    }, timeoutMs)
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
