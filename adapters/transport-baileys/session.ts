import type { CacheStore, ConnectionState, GroupMetadata } from '@whiskeysockets/baileys'
import { TransportError } from 'zapgate'
import type { LinkChallenge, LinkRequest, SessionStatus } from 'zapgate'
import { BoundedMap } from 'zapgate/adapter-kit'
import { boundedCacheStore } from './cache.ts'
import { statusCodeOf, toTransportError, withTimeout } from './errors.ts'
import { normalizeJid, phoneOf, userOf } from './jid.ts'
import { LinkAttempt } from './link-attempt.ts'
import type { MessageStore } from './message-store.ts'
import { backoffDelay, closeAction, describeClose } from './policy.ts'
import { printQr } from './qr-terminal.ts'
import { attachHandlers, createSocket, socketConfig, type SessionDeps } from './socket-wiring.ts'
import { StatusReporter } from './status-reporter.ts'
import type { SocketLike } from './types.ts'

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
  private readonly report: StatusReporter
  private socket?: SocketLike
  private detach?: () => void
  private generation = 0
  private attempts = 0
  private restarts = 0
  private linkRetries = 0
  private openedAt?: number
  private timer?: NodeJS.Timeout
  private linking?: LinkAttempt
  private updates: Promise<void> = Promise.resolve()
  private upserts: Promise<void> = Promise.resolve()

  constructor(private readonly deps: SessionDeps) {
    this.report = new StatusReporter(deps.deviceId, deps.emit)
    if (deps.auth.paired()) this.report.phone = phoneOf(deps.auth.state.creds.me?.id)
  }

  /** The session's status as the gateway reports it. */
  status(): SessionStatus {
    return this.report.snapshot()
  }

  /** The open socket, or TransportError('not-connected'). */
  requireOpen(): SocketLike {
    if (this.report.state !== 'open' || !this.socket) throw new TransportError('not-connected', 'the device is not connected')
    return this.socket
  }

  /** The open socket, or undefined. */
  socketIfOpen(): SocketLike | undefined {
    return this.report.state === 'open' ? this.socket : undefined
  }

  /** Keys (and some contents) of the device's messages. */
  get messages(): MessageStore {
    return this.deps.messages
  }

  /** The linked account's phone and LID, as far as known. */
  self(): { phone?: string; lid?: string } {
    const user = this.socket?.user
    return { phone: phoneOf(user?.id) ?? this.report.phone, lid: user?.lid ? normalizeJid(user.lid) : this.report.lid }
  }

  /** Resume a linked session with its stored credentials (no QR). Does nothing when unlinked or active. */
  async resume(): Promise<void> {
    if (this.socket || this.timer || !this.deps.auth.paired()) return
    this.linking = undefined
    await this.report.set('connecting', { reason: undefined })
    await this.openSocket()
  }

  /**
   * Start a new link from fresh credentials and return the wait for its challenge (the first QR, or the
   * pairing code once WhatsApp accepted it); the caller awaits it outside the device lock. Stored
   * credentials are tried first (unless another client replaced this session): a device that opens
   * with them is already connected.
   */
  async beginLink(request: LinkRequest): Promise<{ challenge: Promise<LinkChallenge> }> {
    if (this.report.state !== 'replaced') await this.resume()
    if (this.report.state === 'connecting' && this.deps.auth.paired() && (this.socket || this.timer)) {
      await this.report.nextChange(this.deps.options.socketConfig.connectTimeoutMs ?? 20_000)
    }
    if (this.report.state === 'open') throw new TransportError('already-connected', 'the device is already connected')
    this.failLink(new TransportError('failed', 'superseded by a newer link request'))
    await this.retire()
    await this.deps.auth.reset()
    const attempt = new LinkAttempt(request.phone, request.code, this.deps.options.linkTimeoutMs, () => this.linkTimedOut(attempt))
    this.linking = attempt
    this.linkRetries = 0
    await this.report.set('linking', { phone: undefined, lid: undefined, reason: undefined })
    await this.openSocket()
    return { challenge: attempt.promise }
  }

  /** Close the socket without unlinking; the session can resume later. */
  async disconnect(): Promise<void> {
    const active = this.socket !== undefined || this.timer !== undefined || this.report.state !== 'closed'
    this.failLink(new TransportError('failed', 'the link was cancelled by a disconnect'))
    await this.retire()
    if (active) await this.report.set('closed', { reason: 'disconnected' })
  }

  /** Unlink from the phone (when connected) and delete the credentials and keys. */
  async logout(): Promise<void> {
    const hadSession = this.deps.auth.paired() || this.report.state !== 'closed'
    this.failLink(new TransportError('failed', 'the link was cancelled by a logout'))
    const socket = this.socketIfOpen()
    if (socket) {
      this.generation++
      this.clearTimer()
      this.detachSocket()
      this.socket = undefined
      await withTimeout(socket.logout(), 10_000, 'logout').catch(() => socket.end(undefined).catch(() => undefined))
    } else {
      await this.retire()
    }
    await this.deps.auth.clear()
    if (hadSession) await this.report.set('closed', { phone: undefined, lid: undefined, reason: 'logged out' })
  }

  /** Close the socket (gateway shutdown): no status change is reported. */
  async shutdown(): Promise<void> {
    this.failLink(new TransportError('failed', 'the transport stopped'))
    await this.retire()
  }

  /** Note how a send ended: a timed-out send marks the open session as stalled (in its reason) until one succeeds. */
  async noteSend(outcome: 'ok' | 'timeout'): Promise<void> {
    if (this.report.state !== 'open') return
    await this.report.set('open', { reason: outcome === 'timeout' ? 'stalled: a send timed out' : undefined })
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
      const { lib, options, auth, baileysLogger: logger, messages } = this.deps
      const config = socketConfig({ lib, options, auth, logger, keyCache: this.keyCache, messages, groups: this.groups, version })
      socket = await createSocket(this.deps.factory, config, { deviceId: this.deps.deviceId })
    } catch (error) {
      if (generation !== this.generation) return
      this.deps.logger.warn({ err: error, deviceId: this.deps.deviceId }, 'could not create the socket')
      return this.afterClose(undefined)
    }
    if (generation !== this.generation) return void socket.end(undefined).catch(() => undefined)
    this.socket = socket
    this.attach(socket, generation)
  }

  private attach(socket: SocketLike, generation: number): void {
    const log = (what: string) => (err: unknown) => this.deps.logger.error({ err, deviceId: this.deps.deviceId }, what)
    this.detach = attachHandlers(socket, {
      connection: update => {
        this.updates = this.updates.then(() => this.onUpdate(socket, generation, update)).catch(log('connection update failed'))
      },
      creds: () => void this.deps.auth.saveCreds().catch(log('saving credentials failed')),
      messages: upsert => {
        this.upserts = this.upserts.then(() => this.deps.onUpsert(this, socket, upsert)).catch(log('incoming messages failed'))
      },
      groupChanged: jid => this.groups.delete(jid),
    })
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
      return this.report.set('closed', { reason: 'not linked' })
    }
    const output = this.deps.options.qrOutput
    if (output && linking.code === undefined) void printQr(qr, output, `Scan this QR in WhatsApp > Linked devices (device ${this.deps.deviceId}):`).catch(() => undefined)
    try {
      if (await linking.onQr(socket, qr, this.deps.options.sendTimeoutMs)) await this.report.emit({ type: 'qr', deviceId: this.deps.deviceId, qr })
    } catch (error) {
      if (generation === this.generation) await this.endLink(toTransportError(error, 'pairing code'), 'the pairing code was refused')
    }
  }

  private async onOpen(socket: SocketLike): Promise<void> {
    const user = socket.user
    this.openedAt = Date.now()
    this.restarts = 0
    this.linking?.reject(new TransportError('already-connected', 'the device connected'))
    this.linking = undefined
    await this.report.set('open', {
      phone: phoneOf(user?.id) ?? (user?.id ? userOf(user.id) : this.report.phone),
      lid: user?.lid ? normalizeJid(user.lid) : this.report.lid,
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
    const reason = describeClose(code)
    if (action.kind === 'restart' && this.restarts++ < 3) {
      if (paired) await this.report.set('connecting', { reason: undefined })
      if (generation === this.generation) await this.openSocket()
      return
    }
    if (action.kind === 'logged-out') {
      await this.deps.auth.clear()
      if (generation !== this.generation) return
      this.failLink(new TransportError('failed', 'WhatsApp refused the link'))
      return this.report.set(paired ? 'logged-out' : 'closed', { phone: undefined, lid: undefined, reason })
    }
    if (action.kind === 'replaced' || action.kind === 'stop') {
      this.failLink(new TransportError('failed', reason))
      return this.report.set(action.kind === 'replaced' ? 'replaced' : 'closed', { reason })
    }
    if (action.kind === 'link-expired') return this.endLink(new TransportError('timeout', 'the QR codes expired'), 'link expired: the QR was not scanned in time')
    if (action.kind === 'reconnect' && action.outdatedVersion) this.deps.version.invalidate()
    if (!paired && (!this.linking || this.linking.code || ++this.linkRetries > 3)) {
      return this.endLink(new TransportError('failed', reason), `link interrupted: ${reason}`)
    }
    const delay = backoffDelay(this.attempts++, this.deps.options.reconnect, this.deps.random)
    this.timer = setTimeout(() => {
      this.timer = undefined
      if (generation === this.generation) void this.openSocket().catch(err => this.deps.logger.error({ err }, 'reconnect failed'))
    }, delay)
    this.timer.unref?.()
    await this.report.set(this.linking ? 'linking' : 'connecting', { reason: `${reason}; reconnecting in ${Math.ceil(delay / 1000)} s` })
  }

  /** The link failed or expired: reject a pending link() and report the session closed. */
  private async endLink(error: TransportError, reason: string): Promise<void> {
    this.failLink(error)
    await this.retire()
    await this.report.set('closed', { reason })
  }

  private async linkTimedOut(attempt: LinkAttempt): Promise<void> {
    if (this.linking !== attempt) return
    await this.endLink(new TransportError('timeout', 'WhatsApp sent no QR in time'), 'link timed out')
  }

  private failLink(error: TransportError): void {
    this.linking?.reject(error)
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
}
