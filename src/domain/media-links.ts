import { createHmac, randomBytes } from 'node:crypto'
import { safeEqual } from '../security/keys.ts'
import type { Storage } from '../ports/storage.ts'

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
    this.key ??= this.loadKey()
    return createHmac('sha256', await this.key)
      .update(payload)
      .digest('base64url')
  }

  private async loadKey(): Promise<Buffer> {
    const stored = await this.storage.get<string>('media-link-key')
    if (stored) return Buffer.from(stored, 'base64')
    const key = randomBytes(32)
    await this.storage.set('media-link-key', key.toString('base64'))
    return key
  }
}
