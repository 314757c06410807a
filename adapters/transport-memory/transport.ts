import { TransportError } from 'zapgate'
import type {
  GroupInfo,
  GroupRef,
  LinkChallenge,
  LinkRequest,
  MessageRef,
  OutgoingMessage,
  SentMessage,
  SessionStatus,
  Transport,
  TransportContext,
  TransportEvent,
} from 'zapgate'
import { KeyedLock } from 'zapgate/adapter-kit'
import { qrString } from './addresses.ts'
import { deviceEndpoint } from './device-endpoint.ts'
import { MemoryNetwork } from './network.ts'
import { RemoteNetwork } from './remote-network.ts'
import { checkLinkRequest, clearTimer, credentialsOf, forgetRefused, sessionKey, snapshot, type Session, type StoredSession } from './session-state.ts'
import type { DeviceEndpoint, DeviceNetwork } from './types.ts'

/** Options of the simulated transport. */
export interface MemoryTransportOptions {
  /** The in-process network to join; share one between transports so that their devices reach each other. */
  network?: MemoryNetwork
  /** Join a simulator server (`npm run sim`) at this URL instead of an in-process network: several gateway processes then share one network (docs/simulator.md). */
  simUrl?: string
  /** Rotate a pending QR this often, emitting `qr` events (default 0: never rotate). */
  qrRefreshMs?: number
  /** Rotations before an unscanned QR link gives up with status `closed` (default: never). */
  qrRefreshLimit?: number
}

/**
 * A Transport over a simulated network (in process, or a simulator server shared by several
 * processes): sessions link by QR or pairing code when a simulated phone scans, the credentials the
 * network issues are kept in the transport's storage (any process on that store can resume the
 * device; one live connection per device, the older one ends `replaced`), and messages, receipts and
 * groups behave like the real network's as far as the gateway can tell.
 */
export class MemoryTransport implements Transport {
  /** The in-process network this transport's devices live on (undefined with `simUrl`). */
  readonly network: MemoryNetwork | undefined
  private readonly net: DeviceNetwork
  private context?: TransportContext
  private readonly sessions = new Map<string, Session>()
  private readonly lock = new KeyedLock()
  private readonly endpoint: DeviceEndpoint

  constructor(private readonly options: MemoryTransportOptions = {}) {
    if (options.simUrl !== undefined && options.network) throw new TypeError('memoryTransport: give network or simUrl, not both')
    this.network = options.simUrl === undefined ? (options.network ?? new MemoryNetwork()) : undefined
    this.net = this.network ?? new RemoteNetwork(options.simUrl!, () => this.context?.logger)
    this.endpoint = deviceEndpoint({
      sessions: this.sessions,
      lock: this.lock,
      storage: () => this.ctx().storage,
      open: (deviceId, stored) => this.open(deviceId, stored),
      announce: (deviceId, session) => this.announce(deviceId, session),
      emitStatus: (deviceId, session) => this.emitStatus(deviceId, session),
      emit: event => this.emit(event),
    })
  }

  async start(context: TransportContext): Promise<void> {
    this.context = context
  }

  async connect(deviceId: string): Promise<void> {
    const storage = this.ctx().storage
    let opened: Session | undefined
    await this.lock.run(deviceId, async () => {
      const current = this.sessions.get(deviceId)
      if (current && (current.state === 'open' || current.state === 'linking' || current.state === 'connecting')) return
      const stored = await storage.get<StoredSession>(sessionKey(deviceId))
      if (!stored?.phone) return
      opened = await this.open(deviceId, stored)
    })
    if (opened) await this.announce(deviceId, opened)
  }

  async link(deviceId: string, request: LinkRequest): Promise<LinkChallenge> {
    this.ctx()
    const { phone, code } = checkLinkRequest(request)
    const session = await this.lock.run(deviceId, async () => {
      const current = this.sessions.get(deviceId)
      if (current?.state === 'open') throw new TransportError('already-connected', 'the device is already connected')
      clearTimer(current)
      const next: Session = { state: 'linking', challenge: code ?? qrString() }
      await this.net.beginLink(deviceId, this.endpoint, code !== undefined ? { code, phone: phone! } : { qr: next.challenge! })
      this.sessions.set(deviceId, next)
      if (code === undefined) this.scheduleRefresh(deviceId, next)
      return next
    })
    await this.emitStatus(deviceId, session)
    return code === undefined ? { kind: 'qr', qr: session.challenge! } : { kind: 'code', code }
  }

  async status(deviceId: string): Promise<SessionStatus> {
    if (this.sessions.has(deviceId)) return this.statusNow(deviceId)!
    const stored = await this.context?.storage.get<StoredSession>(sessionKey(deviceId)).catch(() => undefined)
    return { state: 'closed', connected: false, ...(stored?.phone ? { phone: stored.phone } : {}) }
  }

  statusNow(deviceId: string): SessionStatus | undefined {
    const session = this.sessions.get(deviceId)
    return session && this.snapshot(session)
  }

  /** Given up through `signal` (the gateway's deadline) before the network unlinked the device: nothing is unlinked or deleted, and it rejects. */
  async logout(deviceId: string, signal?: AbortSignal): Promise<void> {
    const storage = this.ctx().storage
    const changed = await this.lock.run(deviceId, async () => {
      if (signal?.aborted) throw new TransportError('timeout', 'the logout was given up before it started: nothing was unlinked or deleted')
      const session = this.sessions.get(deviceId)
      clearTimer(session)
      const stored = await storage.get<StoredSession>(sessionKey(deviceId))
      await this.net.logout(deviceId, stored?.phone ? credentialsOf(stored) : undefined, this.endpoint, signal).catch(err => {
        throw err instanceof TransportError ? err : new TransportError('failed', 'the network did not hear of the logout', { cause: err })
      })
      const existed = await storage.delete(sessionKey(deviceId))
      this.sessions.delete(deviceId)
      return existed || (session !== undefined && session.state !== 'closed')
    })
    if (changed) await this.emitStatus(deviceId, { state: 'closed', reason: 'logged out' })
  }

  /** Close the session without unlinking, and forget it: another instance may take the device over (and delete it); connect() opens it anew from the store. */
  async disconnect(deviceId: string): Promise<void> {
    const session = await this.lock.run(deviceId, async () => {
      const current = this.sessions.get(deviceId)
      this.sessions.delete(deviceId)
      if (!current || (current.state !== 'open' && current.state !== 'linking' && current.state !== 'connecting')) return undefined
      await this.close(deviceId, current)
      current.state = 'closed'
      current.reason = 'disconnected'
      return current
    })
    if (session) await this.emitStatus(deviceId, session)
  }

  /** Throws when the simulator server (`simUrl`) cannot be reached; the in-process network always answers. */
  async ping(): Promise<void> {
    await this.net.ping?.()
  }

  send(deviceId: string, to: string, message: OutgoingMessage): Promise<SentMessage> {
    return this.refusedUnlessOpen(deviceId) ?? this.net.sendFromDevice(deviceId, to, message, this.endpoint)
  }

  markRead(deviceId: string, target: MessageRef): Promise<void> {
    return this.refusedUnlessOpen(deviceId) ?? this.net.markRead(deviceId, target, this.endpoint)
  }

  groupInfo(deviceId: string, group: GroupRef): Promise<GroupInfo | undefined> {
    return this.refusedUnlessOpen(deviceId) ?? this.net.groupInfo(deviceId, group, this.endpoint)
  }

  groupCreate(deviceId: string, subject: string, participants: string[]): Promise<GroupInfo> {
    return this.refusedUnlessOpen(deviceId) ?? this.net.groupCreate(deviceId, subject, participants, this.endpoint)
  }

  groupJoin(deviceId: string, inviteCode: string): Promise<string | undefined> {
    return this.refusedUnlessOpen(deviceId) ?? this.net.groupJoin(deviceId, inviteCode, this.endpoint)
  }

  async stop(): Promise<void> {
    const sessions = [...this.sessions]
    this.sessions.clear()
    await Promise.all(sessions.map(([deviceId, session]) => this.close(deviceId, session).catch(() => undefined)))
    await this.net.close?.(this.endpoint)
  }

  // --- Internal helpers ---

  /** Connect the device with its stored credentials (under the device's lock). */
  private async open(deviceId: string, stored: StoredSession): Promise<Session> {
    const result = await this.net.connect(deviceId, credentialsOf(stored), this.endpoint)
    let session: Session
    if (result.state === 'logged-out') {
      await forgetRefused(this.ctx().storage, deviceId, stored)
      session = { state: 'logged-out', reason: result.reason }
    } else if (result.state === 'connecting') session = { state: 'connecting', phone: stored.phone, reason: result.reason }
    else session = { state: 'open', phone: stored.phone, ...(result.lid ? { lid: result.lid } : {}) }
    this.sessions.set(deviceId, session)
    return session
  }

  /** Report a new session state; once open, let the network hand over what arrived while the device was away. */
  private async announce(deviceId: string, session: Session): Promise<void> {
    await this.emitStatus(deviceId, session)
    if (session.state === 'open') await this.net.flush(deviceId, this.endpoint)
  }

  /** Take the device off the network (its link stays) and stop its timer. */
  private async close(deviceId: string, session: Session): Promise<void> {
    clearTimer(session)
    await this.net.disconnect(deviceId, this.endpoint)
  }

  private scheduleRefresh(deviceId: string, session: Session): void {
    const every = this.options.qrRefreshMs ?? 0
    if (!(every > 0)) return
    let rotations = 0
    session.timer = setInterval(
      () => void this.refresh(deviceId, session, ++rotations).catch(err => this.context?.logger.warn({ err, deviceId }, 'QR not rotated')),
      every,
    )
    session.timer.unref()
  }

  private async refresh(deviceId: string, session: Session, rotation: number): Promise<void> {
    const event = await this.lock.run(deviceId, async (): Promise<TransportEvent | undefined> => {
      if (this.sessions.get(deviceId) !== session || session.state !== 'linking') return clearTimer(session)
      if (rotation > (this.options.qrRefreshLimit ?? Infinity)) {
        await this.close(deviceId, session)
        Object.assign(session, { state: 'closed', reason: 'link timed out' })
        return { type: 'status', deviceId, status: this.snapshot(session) }
      }
      const qr = qrString()
      await this.net.beginLink(deviceId, this.endpoint, { qr })
      session.challenge = qr
      return { type: 'qr', deviceId, qr }
    })
    if (event) await this.emit(event)
  }

  /** A device whose session is not open: its call's refusal (not async methods: a send's path makes two promises less). */
  private refusedUnlessOpen(deviceId: string): Promise<never> | undefined {
    if (this.sessions.get(deviceId)?.state !== 'open') return Promise.reject(new TransportError('not-connected', 'the device is not connected'))
  }

  private snapshot(session: Pick<Session, 'state' | 'phone' | 'reason' | 'lid'>): SessionStatus {
    return snapshot(session, session.phone ? this.network?.post.lidOf(session.phone) : undefined)
  }

  private emitStatus(deviceId: string, session: Pick<Session, 'state' | 'phone' | 'reason' | 'lid'>): Promise<void> {
    return this.emit({ type: 'status', deviceId, status: this.snapshot(session) })
  }

  /** Report an event; a failure is logged, and for a message thrown: the network then keeps it unacked and hands it again. */
  private async emit(event: TransportEvent): Promise<void> {
    try {
      await this.ctx().emit(event)
    } catch (err) {
      this.context?.logger.warn({ err, deviceId: event.deviceId, type: event.type }, 'transport event not recorded')
      if (event.type === 'message') throw err
    }
  }

  private ctx(): TransportContext {
    if (!this.context) throw new TransportError('failed', 'the transport was not started')
    return this.context
  }
}
