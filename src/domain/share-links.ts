import { hashKey, randomKey } from '../security/keys.ts'
import { Collection } from '../store/collection.ts'
import type { KeyedLock } from '../store/keyed-lock.ts'
import type { Storage } from '../ports/storage.ts'
import type { Device, Devices } from './devices.ts'

/** How many share links a device keeps; older ones are revoked. */
const MAX_LINKS_PER_DEVICE = 5
/** How long a QR string is shown before the page asks the transport for a fresh one. */
const QR_TTL_MS = 60_000
/** How long a pairing code asked by operation 3 keeps the page from starting a QR link of its device (which would void the code). */
const PAIRING_TTL_MS = 10 * 60_000

/** QR share links (see shareLinks). */
export type ShareLinks = ReturnType<typeof shareLinks>

/** QR share links: capability URLs (`/qr/<token>`, stored as hashes) that show a device's live QR until it connects, for `ttlMs` at most: the store's ttl of the link, set by the instance that made it (no clocks of two hosts compared). */
export function shareLinks(storage: Storage, lock: KeyedLock, devices: Devices, ttlMs: number) {
  const links = new Collection<{ deviceId: string; accountId: string; ttlMs: number }>(storage, lock, 'share-link')
  const spentLinks = new Collection<true>(storage, lock, 'share-link-spent') // kept as long as a link lives at most
  const qrs = new Collection<{ qr: string; at: number }>(storage, lock, 'qr')
  const pairings = new Collection<true>(storage, lock, 'pairing') // a pairing code is pending: no QR to show, none to start
  /** A link gone (revoked, rotated out, or its device deleted), with its spent mark. */
  const forget = (tokenHash: string) => Promise.all([links.remove(tokenHash), spentLinks.remove(tokenHash)])
  return {
    /** A new share token for the device (the oldest beyond the limit is revoked). */
    async create(device: Device): Promise<string> {
      const token = randomKey(18)
      const tokenHash = hashKey(token)
      await links.put(tokenHash, { deviceId: device.id, accountId: device.accountId, ttlMs }, ttlMs)
      for (const old of await devices.keepLast(device.id, 'shareTokens', MAX_LINKS_PER_DEVICE, tokenHash)) await forget(old)
      return token
    },
    /** The device a token shows and whether it has connected since (`spent`); undefined when the token is unknown, revoked, expired, its device being deleted, or spent on a device logged out since. */
    async resolve(token: string): Promise<{ device: Device; spent: boolean } | undefined> {
      const tokenHash = hashKey(token)
      const link = token.length <= 64 ? await links.get(tokenHash) : undefined
      if (!link?.ttlMs) return undefined // gone at its ttl (or made before links expired)
      const [cached, spent] = await Promise.all([devices.get(link.deviceId), spentLinks.get(tokenHash)])
      // The store says, not this process's cache: a link its cached device does not list was made since on another instance (before this process's epoch poll dropped the device: 404 there for up to 100 ms),
      // and one spent on a device cached as unlinked connected on another instance since (its status is not broadcast) or logged out.
      const stale = cached && (!cached.shareTokens.includes(tokenHash) || (spent && !cached.linked))
      const device = stale ? await devices.load(link.deviceId) : cached
      // A device being deleted (a deletion cut short: only operation 6 still finds it) shows nothing: never linked again.
      const shown = device?.accountId === link.accountId && !device.removing && device.shareTokens.includes(tokenHash) && (device.linked || !spent)
      return shown ? { device, spent: spent === true } : undefined
    },
    /** Revoke every share link of the device. */
    async revokeAll(device: Device): Promise<void> {
      for (const tokenHash of await devices.keepLast(device.id, 'shareTokens', 0)) await forget(tokenHash)
    },
    /** Remember the device's current QR string (from a link call or a transport `qr` event). */
    async rememberQr(deviceId: string, qr: string): Promise<void> {
      await qrs.put(deviceId, { qr, at: Date.now() }, QR_TTL_MS)
      await pairings.remove(deviceId)
    },
    /** Remember that the device now waits for a pairing code (operation 3 with `phone`): its last QR no longer links it. */
    async rememberPairing(deviceId: string): Promise<void> {
      await pairings.put(deviceId, true, PAIRING_TTL_MS)
      await qrs.remove(deviceId)
    },
    /** Whether a pairing code asked for the device may still be pending (see rememberPairing). */
    awaitsCode: async (deviceId: string): Promise<boolean> => (await pairings.get(deviceId)) === true,
    /** The device's current QR string, if one is fresh. */
    currentQr: async (deviceId: string): Promise<string | undefined> => (await qrs.get(deviceId))?.qr,
    /** Forget the QR of a link that ended unscanned (its QR codes ran out, it timed out, was cancelled or refused): no phone can scan it, the page asks for a fresh one. */
    async linkEnded(deviceId: string): Promise<void> {
      await qrs.remove(deviceId)
    },
    /** Forget the QR of a device that connected, and spend its links: they never show a QR again. */
    async connected(deviceId: string): Promise<void> {
      await Promise.all([qrs.remove(deviceId), pairings.remove(deviceId)])
      for (const tokenHash of (await devices.get(deviceId))?.shareTokens ?? []) {
        const link = await links.get(tokenHash)
        if (link?.ttlMs) await spentLinks.put(tokenHash, true, link.ttlMs)
      }
    },
    /** Revoke the links spent on a device the phone has logged out: they stay gone, also once the device is linked again. */
    async loggedOut(deviceId: string): Promise<void> {
      for (const tokenHash of (await devices.load(deviceId))?.shareTokens ?? []) if (await spentLinks.get(tokenHash)) await forget(tokenHash)
    },
    /** Drop the device's links, their spent marks and its QR (removal hook). */
    async removeDevice(device: Device): Promise<void> {
      for (const tokenHash of device.shareTokens) await forget(tokenHash)
      await Promise.all([qrs.remove(device.id), pairings.remove(device.id)])
    },
  }
}
