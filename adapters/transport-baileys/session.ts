import type { BaileysEventMap, CacheStore, ConnectionState, GroupMetadata, UserFacingSocketConfig } from '@whiskeysockets/baileys'
import { TransportError } from '../../src/ports/transport.ts'
import type { LinkChallenge, LinkRequest, SessionState, SessionStatus, TransportEvent } from '../../src/ports/transport.ts'
import type { Logger } from '../../src/logger.ts'
import type { StoredAuthState } from './auth-state.ts'
import { BoundedMap, boundedCacheStore } from './cache.ts'
import { socketCall, statusCodeOf, toTransportError, withTimeout } from './errors.ts'
import { normalizeJid, phoneOf, userOf } from './jid.ts'
import { LinkAttempt } from './link-attempt.ts'
import type { BaileysLogger } from './logger.ts'
import type { MessageStore } from './message-store.ts'
import type { ResolvedOptions } from './options.ts'
import { backoffDelay, closeAction, describeClose } from './policy.ts'
import { printQr } from './qr-terminal.ts'
import type { BaileysModule, SocketFactory, SocketLike } from './types.ts'
import type { VersionSource } from './version.ts'

/** What a device session needs from the transport. */
export interface SessionDeps {
  deviceId: string
  lib: BaileysModule
  options: ResolvedOptions
  factory: SocketFactory
  auth: StoredAuthState
  messages: MessageStore
  version: VersionSource
  logger: Logger
  baileysLogger: BaileysLogger
  /** Report an event to the gateway (resolves once recorded). */
  emit(event: TransportEvent): Promise<void>
  /** Handle one messages.upsert of this session's socket; calls are made one at a time, in order. */
  onUpsert(session: DeviceSession, socket: SocketLike, upsert: BaileysEventMap['messages.upsert']): Promise<void>
  /** Source of randomness for the back-off jitter. */
  random?: () => number
}

/**
 * One device's socket lifecycle and connection policy. Each socket gets a generation number; events of
 * a socket that is no longer current are ignored, and every reconnect is a new factory call with fresh
 * listeners. Public calls are serialised per device by the transport.
 */
export class DeviceSession {
  /** Key cache of the signal store, kept across reconnects. */
  readonly keyCache: CacheStore = boundedCacheStore(5_000, 5 * 60_000)
  /** Group metadata for Baileys' cachedGroupMetadata, dropped on group updates. */
  readonly groups = new BoundedMap<string, GroupMetadata>(500, 5 * 60_000)
  /** Ids of the gateway's own sends, so that their echoes are not reported as received. */
  readonly ownIds = new BoundedMap<string, true>(2_000, 3_600_000)
  /** `chat:id` of messages already reported (dedupe of upserts). */
  readonly seen = new BoundedMap<string, true>(5_000, 24 * 3_600_000)
  private state: SessionState = 'closed'
  private phone?: string
  private lid?: string
  private reason?: string
  private socket?: SocketLike
  private detach?: () => void
  private generation = 0
  private attempts = 0
  private restarts = 0
  private linkRetries = 0
  private openedAt?: number
  private timer?: NodeJS.Timeout
  private linking?: { phone?: string; code?: string; requested: boolean; attempt?: LinkAttempt }
  private lastStatus?: string
  private waiters: (() => void)[] = []
  private updates: Promise<void> = Promise.resolve()
  private upserts: Promise<void> = Promise.resolve()
  private emits: Promise<void> = Promise.resolve()

  constructor(private readonly deps: SessionDeps) {
    const phone = deps.auth.paired() ? phoneOf(deps.auth.state.creds.me?.id) : undefined
    if (phone) this.phone = phone
  }

  /** The session's status as the gateway reports it. */
  status(): SessionStatus {
    const status: SessionStatus = { state: this.state, connected: this.state === 'open' }
    if (this.phone) status.phone = this.phone
    if (this.lid) status.lid = this.lid
    if (this.reason) status.reason = this.reason
    return status
  }

  /** The open socket, or TransportError('not-connected'). */
  requireOpen(): SocketLike {
    if (this.state !== 'open' || !this.socket) throw new TransportError('not-connected', 'the device is not connected')
    return this.socket
  }

  /** The open socket, or undefined. */
  socketIfOpen(): SocketLike | undefined {
    return this.state === 'open' ? this.socket : undefined
  }

  /** Keys (and some contents) of the device's messages. */
  get messages(): MessageStore {
    return this.deps.messages
  }

  /** Resume a linked session with its stored credentials (no QR). Does nothing when unlinked or active. */
  async resume(): Promise<void> {
    if (this.socket || this.timer || !this.deps.auth.paired()) return
    this.linking = undefined
    await this.setState('connecting', { reason: undefined })
    await this.openSocket()
  }

  /**
   * Start a new link from fresh credentials and return the wait for its challenge (the first QR, or the
   * pairing code once WhatsApp accepted it). The caller awaits the wait outside the device lock.
   */
  async beginLink(request: LinkRequest): Promise<{ challenge: Promise<LinkChallenge> }> {
    if (this.state === 'connecting' && this.deps.auth.paired() && (this.socket || this.timer)) {
      await this.waitForChange(this.deps.options.socketConfig.connectTimeoutMs ?? 20_000)
    }
    if (this.state === 'open') throw new TransportError('already-connected', 'the device is already connected')
    this.failLink(new TransportError('failed', 'superseded by a newer link request'))
    await this.retire()
    await this.deps.auth.reset()
    const attempt = new LinkAttempt(this.deps.options.linkTimeoutMs, () => this.linkTimedOut(attempt))
    this.linking = { phone: request.phone, code: request.code, requested: false, attempt }
    this.linkRetries = 0
    await this.setState('linking', { phone: undefined, lid: undefined, reason: undefined })
    await this.openSocket()
    return { challenge: attempt.promise }
  }

  /** Close the socket without unlinking; the session can resume later. */
  async disconnect(): Promise<void> {
    const active = this.socket !== undefined || this.timer !== undefined || this.state !== 'closed'
    this.failLink(new TransportError('failed', 'the link was cancelled by a disconnect'))
    await this.retire()
    if (active) await this.setState('closed', { reason: 'disconnected' })
  }

  /** Unlink from the phone (when connected) and delete the credentials and keys. */
  async logout(): Promise<void> {
    const hadSession = this.deps.auth.paired() || this.state !== 'closed'
    this.failLink(new TransportError('failed', 'the link was cancelled by a logout'))
    const socket = this.state === 'open' ? this.socket : undefined
    if (socket) {
      this.generation++
      this.clearTimer()
      this.detachSocket()
      await withTimeout(socket.logout(), 10_000, 'logout').catch(() => socket.end(undefined).catch(() => undefined))
    } else {
      await this.retire()
    }
    await this.deps.auth.clear()
    if (hadSession) await this.setState('closed', { phone: undefined, lid: undefined, reason: 'logged out' })
  }

  /** Close the socket (gateway shutdown): no status change is reported. */
  async shutdown(): Promise<void> {
    this.failLink(new TransportError('failed', 'the transport stopped'))
    await this.retire()
  }

  /** The linked account's phone and LID, as far as known. */
  self(): { phone?: string; lid?: string } {
    const user = this.socket?.user
    return { phone: phoneOf(user?.id) ?? this.phone, lid: user?.lid ? normalizeJid(user.lid) : this.lid }
  }

  // --- Internal helpers ---

  private async openSocket(): Promise<void> {
    const generation = ++this.generation
    this.clearTimer()
    this.detachSocket()
    const version = await this.deps.version.get()
    if (generation !== this.generation) return
    let socket: SocketLike
    try {
      const made = this.deps.factory(this.socketConfig(version), { deviceId: this.deps.deviceId })
      socket = isPromise(made) ? await made : made
    } catch (error) {
      if (generation !== this.generation) return
      this.deps.logger.warn({ err: error, deviceId: this.deps.deviceId }, 'could not create the socket')
      return this.afterClose(undefined)
    }
    if (generation !== this.generation) return void socket.end(undefined).catch(() => undefined)
    this.socket = socket
    this.attach(socket, generation)
  }

  private socketConfig(version: [number, number, number] | undefined): UserFacingSocketConfig {
    const { lib, options, auth, baileysLogger, messages } = this.deps
    const extra = Object.fromEntries(Object.entries(options.socketConfig).filter(([, value]) => value !== undefined))
    return {
      markOnlineOnConnect: false,
      syncFullHistory: false,
      ...extra,
      auth: { creds: auth.state.creds, keys: lib.makeCacheableSignalKeyStore(auth.state.keys, baileysLogger, this.keyCache) },
      logger: baileysLogger,
      browser: options.browser ?? lib.Browsers.ubuntu('Chrome'),
      emitOwnEvents: false,
      getMessage: async key => (key.id ? messages.content(key.id) : undefined),
      cachedGroupMetadata: async jid => this.groups.get(jid),
      ...(version ? { version } : {}),
    }
  }

  private attach(socket: SocketLike, generation: number): void {
    const log = (what: string) => (err: unknown) => this.deps.logger.error({ err, deviceId: this.deps.deviceId }, what)
    const onUpdate = (update: Partial<ConnectionState>) => {
      this.updates = this.updates.then(() => this.onUpdate(socket, generation, update)).catch(log('connection update failed'))
    }
    const onCreds = () => void this.deps.auth.saveCreds().catch(log('saving credentials failed'))
    const onUpsert = (upsert: BaileysEventMap['messages.upsert']) => {
      this.upserts = this.upserts.then(() => this.deps.onUpsert(this, socket, upsert)).catch(log('incoming messages failed'))
    }
    const onGroups = (updates: { id?: string | null }[]) => updates.forEach(u => u.id && this.groups.delete(u.id))
    const onParticipants = (update: { id: string }) => this.groups.delete(update.id)
    socket.ev.on('connection.update', onUpdate)
    socket.ev.on('creds.update', onCreds)
    socket.ev.on('messages.upsert', onUpsert)
    socket.ev.on('groups.update', onGroups)
    socket.ev.on('group-participants.update', onParticipants)
    this.detach = () => {
      socket.ev.off('connection.update', onUpdate)
      socket.ev.off('creds.update', onCreds)
      socket.ev.off('messages.upsert', onUpsert)
      socket.ev.off('groups.update', onGroups)
      socket.ev.off('group-participants.update', onParticipants)
    }
  }

  private async onUpdate(socket: SocketLike, generation: number, update: Partial<ConnectionState>): Promise<void> {
    if (generation !== this.generation) return
    if (update.qr) await this.onQr(socket, generation, update.qr)
    if (generation !== this.generation) return
    if (update.connection === 'open') await this.onOpen(socket)
    else if (update.connection === 'close') await this.onClose(generation, update.lastDisconnect?.error)
  }

  private async onQr(socket: SocketLike, generation: number, qr: string): Promise<void> {
    const linking = this.linking
    if (!linking) {
      this.deps.logger.warn({ deviceId: this.deps.deviceId }, 'WhatsApp asked for a new link without a link request; closing')
      await this.retire()
      return this.setState('closed', { reason: 'not linked' })
    }
    if (linking.code) {
      if (linking.requested) return
      linking.requested = true
      try {
        const code = await socketCall('pairing code', this.deps.options.sendTimeoutMs, () => socket.requestPairingCode(linking.phone!, linking.code))
        linking.attempt?.resolve({ kind: 'code', code: code || linking.code })
      } catch (error) {
        if (generation === this.generation) await this.endLink(toTransportError(error, 'pairing code'), 'the pairing code was refused')
      }
      return
    }
    const output = this.deps.options.qrOutput
    if (output) void printQr(qr, output, `Scan this QR in WhatsApp > Linked devices (device ${this.deps.deviceId}):`).catch(() => undefined)
    if (linking.attempt && !linking.attempt.settled) linking.attempt.resolve({ kind: 'qr', qr })
    else await this.emit({ type: 'qr', deviceId: this.deps.deviceId, qr })
  }

  private async onOpen(socket: SocketLike): Promise<void> {
    const user = socket.user
    this.openedAt = Date.now()
    this.restarts = 0
    this.linking?.attempt?.reject(new TransportError('already-connected', 'the device connected'))
    this.linking = undefined
    await this.setState('open', {
      phone: phoneOf(user?.id) ?? (user?.id ? userOf(user.id) : this.phone),
      lid: user?.lid ? normalizeJid(user.lid) : this.lid,
      reason: undefined,
    })
  }

  private async onClose(generation: number, error: unknown): Promise<void> {
    if (generation !== this.generation) return
    this.detachSocket()
    this.socket = undefined
    const code = statusCodeOf(error)
    this.deps.logger.info({ deviceId: this.deps.deviceId, code, err: error }, 'socket closed')
    await this.afterClose(code)
  }

  /** Apply the connection policy after the current socket closed (or could not be created). */
  private async afterClose(code: number | undefined): Promise<void> {
    const paired = this.deps.auth.paired()
    const action = closeAction(code, paired)
    if (this.openedAt !== undefined && Date.now() - this.openedAt >= this.deps.options.reconnect.stableAfterMs) this.attempts = 0
    this.openedAt = undefined
    const generation = this.generation
    if (action.kind === 'restart' && this.restarts++ < 3) {
      if (paired) await this.setState('connecting', { reason: undefined })
      if (generation === this.generation) await this.openSocket()
      return
    }
    if (action.kind === 'logged-out') {
      await this.deps.auth.clear()
      if (generation !== this.generation) return
      this.failLink(new TransportError('failed', 'WhatsApp refused the link'))
      return this.setState(paired ? 'logged-out' : 'closed', { phone: undefined, lid: undefined, reason: describeClose(code) })
    }
    if (action.kind === 'replaced') {
      this.failLink(new TransportError('failed', describeClose(code)))
      return this.setState('replaced', { reason: describeClose(code) })
    }
    if (action.kind === 'stop') {
      this.failLink(new TransportError('failed', action.reason))
      return this.setState('closed', { reason: action.reason })
    }
    if (action.kind === 'link-expired') return this.endLink(new TransportError('timeout', 'the QR codes expired'), 'link expired: the QR was not scanned in time')
    if (action.kind === 'reconnect' && action.outdatedVersion) this.deps.version.invalidate()
    if (!paired && (!this.linking || this.linking.code || ++this.linkRetries > 3)) {
      return this.endLink(new TransportError('failed', describeClose(code)), `link interrupted: ${describeClose(code)}`)
    }
    const delay = backoffDelay(this.attempts++, this.deps.options.reconnect, this.deps.random)
    this.timer = setTimeout(() => {
      this.timer = undefined
      if (generation === this.generation) void this.openSocket().catch(err => this.deps.logger.error({ err }, 'reconnect failed'))
    }, delay)
    this.timer.unref?.()
    const reason = `${describeClose(code)}; reconnecting in ${Math.ceil(delay / 1000)} s`
    await this.setState(this.linking ? 'linking' : 'connecting', { reason })
  }

  /** The link failed or expired: reject a pending link() and report the session closed. */
  private async endLink(error: TransportError, reason: string): Promise<void> {
    this.failLink(error)
    await this.retire()
    await this.setState('closed', { reason })
  }

  private async linkTimedOut(attempt: LinkAttempt): Promise<void> {
    if (this.linking?.attempt !== attempt) return
    await this.endLink(new TransportError('timeout', 'WhatsApp sent no QR in time'), 'link timed out')
  }

  private failLink(error: TransportError): void {
    this.linking?.attempt?.reject(error)
    this.linking = undefined
  }

  /** Stop the current socket (and any pending reconnect) without reacting to its close. */
  private async retire(): Promise<void> {
    this.generation++
    this.clearTimer()
    const socket = this.socket
    this.detachSocket()
    this.socket = undefined
    if (socket) await withTimeout(socket.end(undefined), 5_000, 'closing the socket').catch(() => undefined)
  }

  private detachSocket(): void {
    this.detach?.()
    this.detach = undefined
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
  }

  private waitForChange(ms: number): Promise<void> {
    return new Promise(resolve => {
      const done = () => {
        clearTimeout(timer)
        this.waiters = this.waiters.filter(w => w !== done)
        resolve()
      }
      const timer = setTimeout(done, ms)
      this.waiters.push(done)
    })
  }

  private async setState(state: SessionState, patch: { phone?: string; lid?: string; reason?: string } = {}): Promise<void> {
    this.state = state
    if ('phone' in patch) this.phone = patch.phone
    if ('lid' in patch) this.lid = patch.lid
    if ('reason' in patch) this.reason = patch.reason
    for (const wake of [...this.waiters]) wake()
    const status = this.status()
    const text = JSON.stringify(status)
    if (text === this.lastStatus) return
    this.lastStatus = text
    await this.emit({ type: 'status', deviceId: this.deps.deviceId, status })
  }

  /** Events go out one at a time, in the order they happened. */
  private emit(event: TransportEvent): Promise<void> {
    const sent = this.emits.then(() => this.deps.emit(event))
    this.emits = sent.catch(() => undefined)
    return sent
  }
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown })?.then === 'function'
}
