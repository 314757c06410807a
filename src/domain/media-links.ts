import { createHmac, randomBytes } from 'node:crypto'
import { safeEqual } from '../security/keys.ts'
import type { Storage } from '../ports/storage.ts'
import { atomicSteps } from '../store/keyed-lock.ts'

/** How long a media link stays valid: as long as transports remember message keys (7 days). */
const MEDIA_LINK_TTL_MS = 7 * 86_400_000

interface MediaTarget {
  deviceId: string
  messageId: string
}

/** Signed, expiring links to received media too large to inline in a webhook event (an HMAC key kept in storage). */
export class MediaLinks {
  private key?: Promise<Buffer>

  constructor(private readonly storage: Storage) {}

  /** A token for the message's media, valid for `ttlMs`. */
  async sign(target: MediaTarget, ttlMs = MEDIA_LINK_TTL_MS, now = Date.now()): Promise<string> {
    const payload = Buffer.from(JSON.stringify([target.deviceId, target.messageId, now + ttlMs])).toString('base64url')
    return `${payload}.${await this.mac(payload)}`
  }

  /** The target of a valid, unexpired token; undefined otherwise. */
  async verify(token: string, now = Date.now()): Promise<MediaTarget | undefined> {
    if (token.length > 1024) return undefined
    const [payload, mac, extra] = token.split('.')
    if (!payload || !mac || extra !== undefined || !safeEqual(mac, await this.mac(payload))) return undefined
    try {
      const [deviceId, messageId, expires] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as [string, string, number]
      if (typeof deviceId !== 'string' || typeof messageId !== 'string' || !(expires > now)) return undefined
      return { deviceId, messageId }
    } catch {
      return undefined
    }
  }

  private async mac(payload: string): Promise<string> {
    const key = (this.key ??= this.loadKey())
    key.catch(() => this.key === key && (this.key = undefined)) // a store that failed is asked again next time
    return createHmac('sha256', await key)
      .update(payload)
      .digest('base64url')
  }

  private async loadKey(): Promise<Buffer> {
    await atomicSteps(this.storage).add('media-link-key', randomBytes(32).toString('base64')) // only when none: one key for every process
    return Buffer.from((await this.storage.get<string>('media-link-key'))!, 'base64')
  }
}
