import { TransportError } from 'zapgate'
import type { LinkRequest, SessionState, SessionStatus, Storage } from 'zapgate'
import { parsePhone } from './addresses.ts'
import type { DeviceCredentials } from './types.ts'

/**
 * What a MemoryTransport keeps per device: its session as this transport holds it in memory, and
 * its credentials in the transport's storage (shared by every gateway process on the store).
 */

/** What the transport keeps in its storage for a linked device, under `session:<deviceId>`. */
export interface StoredSession {
  phone: string
  linkedAt: number
  /** The secret the network issued when the device was linked (absent in sessions stored before secrets existed). */
  secret?: string
}

/** One device's session as this transport holds it. */
export interface Session {
  state: SessionState
  phone?: string
  lid?: string
  reason?: string
  /** The current QR (or pairing code) while linking. */
  challenge?: string
  timer?: NodeJS.Timeout
}

/** The storage key of a device's session. */
export function sessionKey(deviceId: string): string {
  return `session:${deviceId}`
}

/** The credentials a stored session shows the network. */
export function credentialsOf(stored: StoredSession): DeviceCredentials {
  return stored.secret === undefined ? { phone: stored.phone } : { phone: stored.phone, secret: stored.secret }
}

/**
 * Delete the device's stored session after the network refused `refused`, unless another process
 * has stored newer credentials since (atomically when the storage can).
 */
export async function forgetRefused(storage: Storage, deviceId: string, refused: StoredSession): Promise<void> {
  if (storage.deleteIfEqual) {
    await storage.deleteIfEqual(sessionKey(deviceId), refused)
    return
  }
  const now = await storage.get<StoredSession>(sessionKey(deviceId))
  if (now?.secret === refused.secret && now?.phone === refused.phone) await storage.delete(sessionKey(deviceId))
}

/** The session's status as the port reports it. */
export function snapshot(session: Pick<Session, 'state' | 'phone' | 'reason' | 'lid'>, liveLid?: string): SessionStatus {
  const status: SessionStatus = { state: session.state, connected: session.state === 'open' }
  if (session.phone) status.phone = session.phone
  const lid = liveLid ?? session.lid
  if (session.phone && lid) status.lid = lid
  if (session.reason) status.reason = session.reason
  return status
}

/** Check a link request: nothing (QR), or a phone with an 8-character pairing code; answers the phone's digits. */
export function checkLinkRequest(request: LinkRequest): { phone?: string; code?: string } {
  const { phone: rawPhone, code } = request ?? {}
  const phone = rawPhone === undefined ? undefined : parsePhone(rawPhone)
  if (rawPhone !== undefined && !phone) throw new TransportError('invalid', 'phone must be a phone number')
  if ((phone === undefined) !== (code === undefined)) throw new TransportError('invalid', 'phone and code go together')
  if (code !== undefined && !/^[A-Za-z0-9]{8}$/.test(code)) throw new TransportError('invalid', 'a pairing code has 8 letters or digits')
  return { phone, code }
}

/** Stop the session's QR rotation timer. */
export function clearTimer(session: Session | undefined): undefined {
  if (session?.timer) clearInterval(session.timer)
  if (session) session.timer = undefined
  return undefined
}
