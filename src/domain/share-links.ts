import { hashKey, randomKey } from '../security/keys.ts'
import { Collection } from '../store/collection.ts'
import type { KeyedLock } from '../store/keyed-lock.ts'
import type { Storage } from '../ports/storage.ts'
import type { Device, Devices } from './devices.ts'

/** How many share links a device keeps; older ones are revoked. */
const MAX_LINKS_PER_DEVICE = 5
/** How long a QR string is shown before the page asks the transport for a fresh one. */
const QR_TTL_MS = 60_000

/** QR share links (see shareLinks). */
export type ShareLinks = ReturnType<typeof shareLinks>

/** QR share links: capability URLs (`/qr/<token>`, stored as hashes) that show a device's live QR until it connects. */
export function shareLinks(storage: Storage, lock: KeyedLock, devices: Devices) {
  const links = new Collection<{ deviceId: string; accountId: string; createdAt: number }>(storage, lock, 'share-link')
  const qrs = new Collection<{ qr: string; at: number }>(storage, lock, 'qr')
  return {
    /** A new share token for the device (the oldest beyond the limit is revoked). */
    async create(device: Device): Promise<string> {
      const token = randomKey(18)
      const tokenHash = hashKey(token)
      await links.put(tokenHash, { deviceId: device.id, accountId: device.accountId, createdAt: Date.now() })
      for (const old of await devices.keepLast(device.id, 'shareTokens', MAX_LINKS_PER_DEVICE, tokenHash)) await links.remove(old)
      return token
    },
    /** The device a token shows, or undefined when the token is unknown or revoked. */
    async resolve(token: string): Promise<Device | undefined> {
      if (token.length > 64) return undefined
      const tokenHash = hashKey(token)
      const link = await links.get(tokenHash)
      const device = link && (await devices.get(link.deviceId))
      return device && device.accountId === link.accountId && device.shareTokens.includes(tokenHash) ? device : undefined
    },
    /** Revoke every share link of the device; resolves with how many there were. */
    async revokeAll(device: Device): Promise<number> {
      const tokens = await devices.keepLast(device.id, 'shareTokens', 0)
      for (const tokenHash of tokens) await links.remove(tokenHash)
      return tokens.length
    },
    /** Remember the device's current QR string (from a link call or a transport `qr` event). */
    rememberQr: (deviceId: string, qr: string): Promise<void> => qrs.put(deviceId, { qr, at: Date.now() }, QR_TTL_MS),
    /** The device's current QR string, if one is fresh. */
    currentQr: async (deviceId: string): Promise<string | undefined> => (await qrs.get(deviceId))?.qr,
    /** Forget the device's QR (it connected, or was deleted). */
    forgetQr: async (deviceId: string): Promise<void> => void (await qrs.remove(deviceId)),
    /** Drop the device's links and QR (removal hook). */
    async removeDevice(device: Device): Promise<void> {
      for (const tokenHash of device.shareTokens) await links.remove(tokenHash)
      await qrs.remove(device.id)
    },
  }
}
