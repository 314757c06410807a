import { createHmac, randomBytes } from 'node:crypto'
import { safeEqual } from '../security/keys.ts'
import type { Storage } from '../ports/storage.ts'
import type { IncomingMessage, MediaRef, MessageRef } from '../ports/transport.ts'
import { atomicSteps } from '../store/keyed-lock.ts'

/** How long a media link stays valid: as long as transports remember message keys (7 days). */
const MEDIA_LINK_TTL_MS = 7 * 86_400_000

/** What a media link names: a device, and a message of it. */
type MediaTarget = { deviceId: string; message: MediaRef }

/** The MediaRef of a message as its event names it: an id names a message only in its chat, direction and group sender (see MediaRef). */
export function mediaRefOf({ id, chat, fromMe, isGroup, fromLid, from }: IncomingMessage): MediaRef {
  return { chat, id, fromMe, participant: isGroup && !fromMe ? (fromLid ?? from) : undefined }
}

/** Signed, expiring links to received media too large to inline in a webhook event (an HMAC key kept in storage). */
export class MediaLinks {
  private key?: Promise<Buffer>

  constructor(private readonly storage: Storage) {}

  /** A token for the message's media (named where it is: see MediaRef), valid for `ttlMs`. */
  async sign({ deviceId, message: m }: MediaTarget, ttlMs = MEDIA_LINK_TTL_MS, now = Date.now()): Promise<string> {
    const payload = Buffer.from(JSON.stringify([deviceId, m.id, now + ttlMs, ...(m.chat === undefined ? [] : [{ ...m, id: undefined }])])).toString('base64url')
    return `${payload}.${await this.mac(payload)}`
  }

  /** The target of a valid, unexpired token; undefined otherwise. */
  async verify(token: string, now = Date.now()): Promise<MediaTarget | undefined> {
    const [payload, mac, extra] = token.length > 1024 ? [] : token.split('.')
    if (!payload || !mac || extra !== undefined || !safeEqual(mac, await this.mac(payload))) return undefined
    try {
      const [deviceId, id, expires, ref] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as [string, string, number, Omit<MessageRef, 'id'>?]
      if (typeof deviceId !== 'string' || typeof id !== 'string' || !(expires > now)) return undefined
      return { deviceId, message: ref ? { ...ref, id } : { id } } // no ref: signed by 0.1.0 or earlier, the id alone (see MediaRef)
    } catch {
      return undefined
    }
  }

  private async mac(payload: string): Promise<string> {
    const key = (this.key ??= this.loadKey())
    key.catch(() => this.key === key && (this.key = undefined)) // a store that failed is asked again next time
    const hmac = createHmac('sha256', await key)
    return hmac.update(payload).digest('base64url')
  }

  private async loadKey(): Promise<Buffer> {
    await atomicSteps(this.storage).add('media-link-key', randomBytes(32).toString('base64')) // only when none: one key for every process
    return Buffer.from((await this.storage.get<string>('media-link-key'))!, 'base64')
  }
}
