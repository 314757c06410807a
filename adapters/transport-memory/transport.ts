import { TransportError } from 'zapgate'
import type {
  GroupInfo,
  GroupRef,
  LinkChallenge,
  LinkRequest,
  MessageRef,
  OutgoingMessage,
  SentMessage,
  SessionState,
  SessionStatus,
  Transport,
  TransportContext,
  TransportEvent,
} from 'zapgate'
import { KeyedLock } from 'zapgate/adapter-kit'
import { parsePhone, qrString } from './addresses.ts'
import { MemoryNetwork } from './network.ts'
import type { DeviceEndpoint } from './types.ts'

/** Options of the simulated transport. */
export interface MemoryTransportOptions {
  /** The network to join; share one between transports so that their devices reach each other. */
  network?: MemoryNetwork
  /** Rotate a pending QR this often, emitting `qr` events (default 0: never rotate). */
  qrRefreshMs?: number
  /** Rotations before an unscanned QR link gives up with status `closed` (default: never). */
  qrRefreshLimit?: number
}

/** What the transport keeps in its storage for a linked device, under `session:<deviceId>`. */
export interface StoredSession {
  phone: string
  linkedAt: number
}

/**
 * A Transport over a simulated network (MemoryNetwork): sessions link by QR or pairing code when a
 * simulated phone scans, survive restarts through the transport's storage, and messages, receipts and
 * groups behave like the real network's as far as the gateway can tell.
 */
export class MemoryTransport implements Transport {
  /** The network this transport's devices live on. */
  readonly network: MemoryNetwork
  private context?: TransportContext
  private readonly sessions = new Map<string, Session>()
  private readonly lock = new KeyedLock()
  private readonly endpoint: DeviceEndpoint

  constructor(private readonly options: MemoryTransportOptions = {}) {
    this.network = options.network ?? new MemoryNetwork()
    this.endpoint = {
      linked: (deviceId, phone) => this.linked(deviceId, phone),
      receive: (deviceId, message) => this.emit({ type: 'message', deviceId, message }),
      closed: (deviceId, state, reason) => this.closed(deviceId, state, reason),
    }
  }

  async start(context: TransportContext): Promise<void> {
    this.context = context
  }

  async connect(deviceId: string): Promise<void> {
    const storage = this.ctx().storage
    let opened: Session | undefined
    await this.lock.run(deviceId, async () => {
      const current = this.sessions.get(deviceId)
      if (current && (current.state === 'open' || current.state === 'linking')) return
      const stored = await storage.get<StoredSession>(sessionKey(deviceId))
      if (!stored?.phone) return
      opened = await this.open(deviceId, stored.phone)
    })
    if (opened) await this.announce(deviceId, opened)
  }

  async link(deviceId: string, request: LinkRequest): Promise<LinkChallenge> {
    this.ctx()
    const { phone: rawPhone, code } = request ?? {}
    const phone = rawPhone === undefined ? undefined : parsePhone(rawPhone)
    if (rawPhone !== undefined && !phone) throw new TransportError('invalid', 'phone must be a phone number')
    if ((phone === undefined) !== (code === undefined)) throw new TransportError('invalid', 'phone and code go together')
    if (code !== undefined && !/^[A-Za-z0-9]{8}$/.test(code)) throw new TransportError('invalid', 'a pairing code has 8 letters or digits')
    const session = await this.lock.run(deviceId, async () => {
      const current = this.sessions.get(deviceId)
      if (current?.state === 'open') throw new TransportError('already-connected', 'the device is already connected')
      clearTimer(current)
      const next: Session = { state: 'linking', challenge: code ?? qrString() }
      if (code !== undefined) this.network.devices.beginLink(deviceId, this.endpoint, { code, phone: phone! })
      else this.network.devices.beginLink(deviceId, this.endpoint, { qr: next.challenge! })
      this.sessions.set(deviceId, next)
      if (code === undefined) this.scheduleRefresh(deviceId, next)
      return next
    })
    await this.emitStatus(deviceId, session)
    return code === undefined ? { kind: 'qr', qr: session.challenge! } : { kind: 'code', code }
  }

  async status(deviceId: string): Promise<SessionStatus> {
    const session = this.sessions.get(deviceId)
    if (session) return this.snapshot(session)
    const stored = await this.context?.storage.get<StoredSession>(sessionKey(deviceId)).catch(() => undefined)
    return { state: 'closed', connected: false, ...(stored?.phone ? { phone: stored.phone } : {}) }
  }

  async logout(deviceId: string): Promise<void> {
    const storage = this.ctx().storage
    const changed = await this.lock.run(deviceId, async () => {
      const session = this.sessions.get(deviceId)
      clearTimer(session)
      this.network.devices.forget(deviceId)
      this.network.faults.release(deviceId)
      const existed = await storage.delete(sessionKey(deviceId))
      this.sessions.delete(deviceId)
      return existed || (session !== undefined && session.state !== 'closed')
    })
    if (changed) await this.emitStatus(deviceId, { state: 'closed', reason: 'logged out' })
  }

  async disconnect(deviceId: string): Promise<void> {
    const session = await this.lock.run(deviceId, async () => {
      const current = this.sessions.get(deviceId)
      if (!current || (current.state !== 'open' && current.state !== 'linking')) return undefined
      this.close(deviceId, current)
      current.state = 'closed'
      current.reason = 'disconnected'
      return current
    })
    if (session) await this.emitStatus(deviceId, session)
  }

  async send(deviceId: string, to: string, message: OutgoingMessage): Promise<SentMessage> {
    this.requireOpen(deviceId)
    return this.network.sendFromDevice(deviceId, to, message)
  }

  async markRead(deviceId: string, target: MessageRef): Promise<void> {
    this.requireOpen(deviceId)
    return this.network.markRead(deviceId, target)
  }

  async groupInfo(deviceId: string, group: GroupRef): Promise<GroupInfo | undefined> {
    this.requireOpen(deviceId)
    return this.network.groupInfo(deviceId, group)
  }

  async groupCreate(deviceId: string, subject: string, participants: string[]): Promise<GroupInfo> {
    this.requireOpen(deviceId)
    return this.network.groupCreate(deviceId, subject, participants)
  }

  async groupJoin(deviceId: string, inviteCode: string): Promise<string | undefined> {
    this.requireOpen(deviceId)
    return this.network.groupJoin(deviceId, inviteCode)
  }

  async stop(): Promise<void> {
    for (const [deviceId, session] of this.sessions) this.close(deviceId, session)
    this.sessions.clear()
  }

  // --- Internal helpers ---

  /** A simulated phone completed the device's pending link. */
  private async linked(deviceId: string, phone: string): Promise<void> {
    const storage = this.ctx().storage
    const session = await this.lock.run(deviceId, async () => {
      if (this.sessions.get(deviceId)?.state !== 'linking') throw new TransportError('not-found', 'the device is no longer linking')
      clearTimer(this.sessions.get(deviceId))
      await storage.set(sessionKey(deviceId), { phone, linkedAt: Date.now() } satisfies StoredSession)
      return this.open(deviceId, phone)
    })
    await this.announce(deviceId, session)
  }

  /** The network closed the session (replaced by another client, or unlinked by the phone). */
  private async closed(deviceId: string, state: 'replaced' | 'logged-out', reason: string): Promise<void> {
    const session = await this.lock.run(deviceId, async () => {
      const current = this.sessions.get(deviceId)
      clearTimer(current)
      if (state === 'logged-out') await this.ctx().storage.delete(sessionKey(deviceId))
      const next: Session = { state, reason, phone: state === 'replaced' ? current?.phone : undefined }
      this.sessions.set(deviceId, next)
      return next
    })
    await this.emitStatus(deviceId, session)
  }

  /** Bring the device online as `phone` (under the device's lock). */
  private async open(deviceId: string, phone: string): Promise<Session> {
    const { state, replaced } = this.network.devices.attach(deviceId, phone, this.endpoint)
    if (state === 'logged-out') {
      await this.ctx().storage.delete(sessionKey(deviceId))
      const session: Session = { state: 'logged-out', reason: 'unlinked from the phone' }
      this.sessions.set(deviceId, session)
      return session
    }
    const session: Session = { state: 'open', phone }
    this.sessions.set(deviceId, session)
    replaced?.closed(deviceId, 'replaced', 'the session was opened elsewhere').catch(err => {
      this.context?.logger.warn({ err, deviceId }, 'replaced session not closed')
    })
    return session
  }

  /** Report a new session state; once open, hand over what arrived while the device was away. */
  private async announce(deviceId: string, session: Session): Promise<void> {
    await this.emitStatus(deviceId, session)
    if (session.state === 'open') await this.network.devices.flush(deviceId)
  }

  /** Take the device off the network (its link stays) and stop its timer. */
  private close(deviceId: string, session: Session): void {
    clearTimer(session)
    this.network.devices.cancelLink(deviceId)
    this.network.devices.detach(deviceId, this.endpoint)
    this.network.faults.release(deviceId)
  }

  private scheduleRefresh(deviceId: string, session: Session): void {
    const every = this.options.qrRefreshMs ?? 0
    if (!(every > 0)) return
    let rotations = 0
    session.timer = setInterval(() => void this.refresh(deviceId, session, ++rotations), every)
    session.timer.unref()
  }

  private async refresh(deviceId: string, session: Session, rotation: number): Promise<void> {
    const event = await this.lock.run(deviceId, async (): Promise<TransportEvent | undefined> => {
      if (this.sessions.get(deviceId) !== session || session.state !== 'linking') return clearTimer(session)
      if (rotation > (this.options.qrRefreshLimit ?? Infinity)) {
        this.close(deviceId, session)
        Object.assign(session, { state: 'closed', reason: 'link timed out' })
        return { type: 'status', deviceId, status: this.snapshot(session) }
      }
      session.challenge = qrString()
      this.network.devices.beginLink(deviceId, this.endpoint, { qr: session.challenge })
      return { type: 'qr', deviceId, qr: session.challenge }
    })
    if (event) await this.emit(event)
  }

  private requireOpen(deviceId: string): void {
    if (this.sessions.get(deviceId)?.state !== 'open') throw new TransportError('not-connected', 'the device is not connected')
  }

  private snapshot(session: Pick<Session, 'state' | 'phone' | 'reason'>): SessionStatus {
    const status: SessionStatus = { state: session.state, connected: session.state === 'open' }
    if (session.phone) status.phone = session.phone
    const lid = session.phone && this.network.post.lidOf(session.phone)
    if (lid) status.lid = lid
    if (session.reason) status.reason = session.reason
    return status
  }

  private emitStatus(deviceId: string, session: Pick<Session, 'state' | 'phone' | 'reason'>): Promise<void> {
    return this.emit({ type: 'status', deviceId, status: this.snapshot(session) })
  }

  private async emit(event: TransportEvent): Promise<void> {
    try {
      await this.ctx().emit(event)
    } catch (err) {
      this.context?.logger.warn({ err, deviceId: event.deviceId, type: event.type }, 'transport event not recorded')
    }
  }

  private ctx(): TransportContext {
    if (!this.context) throw new TransportError('failed', 'the transport was not started')
    return this.context
  }
}

/** One device's session as this transport holds it. */
interface Session {
  state: SessionState
  phone?: string
  reason?: string
  /** The current QR (or pairing code) while linking. */
  challenge?: string
  timer?: NodeJS.Timeout
}

function sessionKey(deviceId: string): string {
  return `session:${deviceId}`
}

function clearTimer(session: Session | undefined): undefined {
  if (session?.timer) clearInterval(session.timer)
  if (session) session.timer = undefined
  return undefined
}
