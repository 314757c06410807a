import { TransportError } from 'zapgate'
import type { Storage, TransportEvent } from 'zapgate'
import type { KeyedLock } from 'zapgate/adapter-kit'
import { clearTimer, sessionKey, type Session, type StoredSession } from './session-state.ts'
import type { DeviceCredentials, DeviceEndpoint } from './types.ts'

/** What a MemoryTransport lends its DeviceEndpoint: its sessions, their lock, and how it opens and reports them. */
interface EndpointHost {
  sessions: Map<string, Session>
  lock: KeyedLock
  storage(): Storage
  /** Connect the device with its stored credentials (under the device's lock). */
  open(deviceId: string, stored: StoredSession): Promise<Session>
  /** Report a new session state; once open, let the network hand over what arrived while the device was away. */
  announce(deviceId: string, session: Session): Promise<void>
  emitStatus(deviceId: string, session: Session): Promise<void>
  /** Report an event (a message's failure is thrown: the network then keeps it unacked). */
  emit(event: TransportEvent): Promise<void>
}

/**
 * How the network reaches a MemoryTransport: a link completed, a message, the session closed by the
 * network (replaced or unlinked), and (simulator server only) the connection lost and resumed.
 */
export function deviceEndpoint(host: EndpointHost): DeviceEndpoint {
  const { sessions, lock } = host
  return {
    /** A simulated phone completed the device's pending link: keep the credentials, then connect with them. */
    async linked(deviceId: string, credentials: Required<DeviceCredentials>): Promise<void> {
      const storage = host.storage()
      const session = await lock.run(deviceId, async () => {
        if (sessions.get(deviceId)?.state !== 'linking') throw new TransportError('not-found', 'the device is no longer linking')
        clearTimer(sessions.get(deviceId))
        const stored: StoredSession = { phone: credentials.phone, linkedAt: Date.now(), secret: credentials.secret }
        await storage.set(sessionKey(deviceId), stored)
        return host.open(deviceId, stored)
      })
      await host.announce(deviceId, session)
    },

    receive: (deviceId, message) => host.emit({ type: 'message', deviceId, message }),

    /** The network closed the session (replaced by another client, or unlinked). Nothing reconnects it. */
    async closed(deviceId: string, state: 'replaced' | 'logged-out', reason: string): Promise<void> {
      const session = await lock.run(deviceId, async () => {
        const current = sessions.get(deviceId)
        if (state === 'replaced' && current?.state !== 'open' && current?.state !== 'connecting') return undefined
        clearTimer(current)
        if (state === 'logged-out') await host.storage().delete(sessionKey(deviceId))
        const next: Session = { state, reason, phone: state === 'replaced' ? current?.phone : undefined }
        sessions.set(deviceId, next)
        return next
      })
      if (session) await host.emitStatus(deviceId, session)
    },

    /** The simulator server's connection was lost; the network retries it. */
    async interrupted(deviceId: string, reason: string): Promise<void> {
      const session = await lock.run(deviceId, async () => {
        const current = sessions.get(deviceId)
        if (current?.state !== 'open') return undefined
        Object.assign(current, { state: 'connecting', reason })
        return current
      })
      if (session) await host.emitStatus(deviceId, session)
    },

    /** A connection that was being retried is open again. */
    async resumed(deviceId: string, lid: string | undefined): Promise<void> {
      const session = await lock.run(deviceId, async () => {
        const current = sessions.get(deviceId)
        if (current?.state !== 'connecting') return undefined
        Object.assign(current, { state: 'open', lid, reason: undefined })
        return current
      })
      if (session) await host.announce(deviceId, session)
    },
  }
}
