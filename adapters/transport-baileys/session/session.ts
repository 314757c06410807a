import type { ConnectionState } from '@whiskeysockets/baileys'
import { TransportError, type LinkChallenge, type LinkRequest, type SessionStatus } from 'zapgate'
import { watchConnection } from './connection-watch.ts'
import { reportFailures } from './delivery-failures.ts'
import { socketCall, toTransportError, withTimeout } from '../errors.ts'
import { normalizeJid, phoneOf, userOf } from '../jid.ts'
import { LinkAttempt } from './link-attempt.ts'
import { backoffDelay, closeAction, ConnectionProblem, describeClose } from '../policy.ts'
import { printQr } from '../qr-terminal.ts'
import type { SessionDeps } from './session-deps.ts'
import { attachHandlers, createSocket, socketConfig } from './socket-wiring.ts'
import { DeviceMemory } from './device-memory.ts'
import { SocketSlot } from './socket-slot.ts'
import { StatusReporter } from './status-reporter.ts'
import type { SocketLike } from '../types.ts'

/**
 * One device's socket lifecycle and connection policy. Each socket gets a generation number; events of a socket that is no longer current
 * are ignored, and every reconnect is a new factory call with fresh listeners. Public calls are serialised per device by the transport; the
 * socket's own events run one at a time on the slot's queue. The session holds the socket (SocketSlot) and what the device keeps across
 * sockets (DeviceMemory: send, receive and groups use it); it decides what happens to them.
 */
export class DeviceSession {
  readonly memory: DeviceMemory
  private readonly slot: SocketSlot
  private readonly report: StatusReporter
  private attempts = 0
  private restarts = 0
  private linkRetries = 0
  private openedAt?: number
  private linking?: LinkAttempt
  private unreachable?: string // why the last socket ended, when WhatsApp could not be reached (link() then answers 'unreachable')
  private stopped = false // set by shutdown(): a connect() or link() still under way (stop() takes no device lock) opens no socket after it

  constructor(private readonly deps: SessionDeps) {
    this.memory = new DeviceMemory(deps.messages)
    this.slot = new SocketSlot(deps.deviceId, deps.logger)
    this.report = new StatusReporter(deps.deviceId, deps.emit)
    if (deps.auth.paired()) this.report.phone = phoneOf(deps.auth.state.creds.me?.id)
  }

  /** The session's status as the gateway reports it. */
  status(): SessionStatus {
    return this.report.snapshot()
  }

  /** The open socket, or TransportError('not-connected'). */
  requireOpen(): SocketLike {
    if (this.report.state !== 'open' || !this.slot.socket) throw new TransportError('not-connected', 'the device is not connected')
    return this.slot.socket
  }

  /** The open socket, or undefined. */
  socketIfOpen(): SocketLike | undefined {
    return this.report.state === 'open' ? this.slot.socket : undefined
  }

  /** The linked account's phone and LID, as far as known. */
  self(): { phone?: string; lid?: string } {
    const user = this.slot.socket?.user
    return { phone: phoneOf(user?.id) ?? this.report.phone, lid: user?.lid ? normalizeJid(user.lid) : this.report.lid }
  }

  /**
   * Open the session with its stored credentials (no QR). Does nothing when unlinked or active. This is also how a session that another
   * client replaced (440) is opened again: the adapter never does that by itself; the caller (the gateway's lease holder) decides when.
   * The creds and keys are read from the store again, not kept from this session's last socket: another instance may have run the device since.
   */
  async resume(): Promise<void> {
    if (this.slot.socket || this.slot.reconnectPending) return
    await this.deps.auth.reload().then(() => this.memory.forgetAccount())
    if (!this.deps.auth.paired()) return
    this.linking = undefined
    await this.report.set('connecting', { reason: undefined }).then(() => this.openSocket())
  }

  /**
   * Start a new link from fresh credentials and return the wait for its challenge (the first QR, or the pairing code once WhatsApp
   * accepted it); the caller awaits it outside the device lock. Stored credentials are tried first (unless another client replaced this
   * session): a device that opens with them is already connected, one still reconnecting keeps them (the phone may still list it).
   */
  async beginLink(request: LinkRequest): Promise<{ challenge: Promise<LinkChallenge> }> {
    if (this.report.state !== 'replaced') await this.resume()
    await this.awaitReconnect('the device is linked and still reconnecting; try again shortly')
    if (this.report.state === 'open') throw new TransportError('already-connected', 'the device is already connected')
    this.failLink(new TransportError('failed', 'superseded by a newer link request'))
    await this.slot.retire()
    await this.deps.auth.reset()
    this.memory.forgetAccount()
    const attempt = new LinkAttempt(request.phone, request.code, this.deps.options.linkTimeoutMs, () => this.linkTimedOut(attempt))
    this.linking = attempt
    this.linkRetries = 0
    await this.report.set('linking', { phone: undefined, lid: undefined, reason: undefined }).then(() => this.openSocket())
    return { challenge: attempt.promise }
  }

  /** Close the socket without unlinking; the session can resume later (here, or in an instance taking the device over: writes under way reach the store first). */
  async disconnect(): Promise<void> {
    const active = this.slot.socket !== undefined || this.slot.reconnectPending || this.report.state !== 'closed'
    this.failLink(new TransportError('failed', 'the link was cancelled by a disconnect'))
    await this.slot.retire()
    await this.memory.endSocketWork() // another instance may take the device over once this resolves
    this.deps.auth.retireSockets() // a late commit of the ended socket must not land over the keys of the instance taking the device over
    await this.deps.auth.flush()
    if (active && this.report.state !== 'logged-out') await this.report.set('closed', { reason: 'disconnected' }) // a logout stands: it needs a new link
  }

  /** Unlink from the phone and delete the credentials and keys; a reconnecting or replaced device is opened first: not open in time (or before `signal`, or replaced meanwhile), or the unlink failed (or was cut by it), nothing is deleted. */
  async logout(signal?: AbortSignal): Promise<void> {
    const hadSession = this.deps.auth.paired() || this.report.state !== 'closed'
    this.failLink(new TransportError('failed', 'the link was cancelled by a logout'))
    if (this.deps.auth.paired() && /^(connecting|replaced)$/.test(this.report.state)) await this.awaitReconnect('not open in time for the logout', true, signal)
    if (signal?.aborted || this.report.state === 'replaced') throw new TransportError('timeout', 'not unlinked: deadline passed, or another client took over')
    const failed = await this.slot.unlink(this.socketIfOpen(), 10_000, signal)
    if (failed) {
      await this.report.set('connecting', { reason: `${failed.message}; reconnecting` }).then(() => this.openSocket())
      throw failed // WhatsApp did not hear of it: the phone still lists the device, which stays whole (its credentials, on a new socket)
    }
    await this.memory.endSocketWork().then(() => this.deps.auth.clear()) // messages already received reported and remembered first: none lands after the deletion
    this.memory.forgetAccount()
    if (hadSession) await this.report.set('closed', { phone: undefined, lid: undefined, reason: 'logged out' })
  }

  /** Close the socket (gateway shutdown) without reporting; pending media and credential writes finish first. */
  async shutdown(): Promise<void> {
    this.stopped = true
    this.failLink(new TransportError('failed', 'the transport stopped'))
    await this.slot.retire()
    await this.memory.endSocketWork()
    await this.deps.auth.flush()
  }

  /** A send on `socket` stalled (half-open connection): end that socket and reconnect (once, however many sends stalled on it). */
  async restartStalled(socket: SocketLike): Promise<void> {
    if (socket !== this.slot.socket || this.report.state !== 'open') return
    await this.abandon(socket, this.slot.generation, new ConnectionProblem('stalled: a send timed out'))
  }

  /** Wait (openTimeoutMs, or till `signal`; `now`: a pending reconnect, or a replaced session, opened at once) while the linked device reconnects; still then: 'unreachable' or 'timeout' (`why`), and a replaced session opened here is ended and `replaced` again (the adapter never reopens one by itself: it would take the session from the other client). */
  private async awaitReconnect(why: string, now = false, signal?: AbortSignal): Promise<void> {
    const replaced = now && this.report.state === 'replaced' ? { reason: this.report.snapshot().reason } : undefined
    if (now) await (replaced ? this.resume() : this.slot.reconnectPending && this.openSocket()) // a logout: WhatsApp must hear of it, or the phone keeps listing the device (a replaced session's credentials still work)
    if (!(await this.report.whileConnecting(this.deps.options.openTimeoutMs, () => this.deps.auth.paired(), signal))) return
    if (replaced) await this.slot.retire().then(() => this.report.set('replaced', replaced))
    throw new TransportError(this.unreachable ? 'unreachable' : 'timeout', this.unreachable ? `device linked and reconnecting: ${this.unreachable}` : why)
  }

  private async openSocket(): Promise<void> {
    if (this.stopped) return this.failLink(new TransportError('failed', 'the transport stopped'))
    const generation = this.slot.next()
    const { lib, options, auth, baileysLogger: logger, messages, agent } = this.deps
    const version = await this.deps.version.get(agent)
    if (generation !== this.slot.generation) return
    let socket: SocketLike
    try {
      const fetch = (jid: string) => () => socketCall('group metadata', options.sendTimeoutMs, () => this.slot.requireSocket().groupMetadata(jid))
      const groupMetadata = (jid: string) => this.memory.groups.lookup(jid, fetch(jid))
      const config = socketConfig({ lib, options, auth, logger, keyCache: this.memory.keyCache, messages, groupMetadata, version, agent })
      socket = await createSocket(this.deps.factory, config, { deviceId: this.deps.deviceId })
    } catch (error) {
      if (generation !== this.slot.generation) return
      this.deps.logger.warn({ err: error, deviceId: this.deps.deviceId }, 'could not create the socket')
      return this.afterClose(new Error(`could not create the socket: ${error instanceof Error ? error.message : String(error)}`))
    }
    if (generation !== this.slot.generation) return void socket.end(undefined).catch(() => undefined)
    this.attach(socket, generation)
    this.slot.watchUntilOpen(watchConnection(socket, options.openTimeoutMs, problem => this.slot.queue(() => this.abandon(socket, generation, problem))))
  }

  private attach(socket: SocketLike, generation: number): void {
    const log = (what: string) => (err: unknown) => this.deps.logger.error({ err, deviceId: this.deps.deviceId }, what)
    const ownIds = () => [socket.user?.id, socket.user?.lid].filter((x): x is string => !!x)
    const failures = { deviceId: this.deps.deviceId, messages: this.deps.messages, socket, emit: this.report.emit.bind(this.report) }
    this.slot.hold(
      socket,
      attachHandlers(socket, {
        connection: update => this.slot.queue(() => this.onUpdate(socket, generation, update)),
        creds: () => void this.deps.auth.saveCreds().catch(log('saving credentials failed')),
        messages: upsert => this.memory.handleIncoming(() => this.deps.onUpsert(socket, upsert), log('incoming messages failed')),
        messageUpdates: updates => this.memory.handleIncoming(() => reportFailures(failures, updates), log('delivery failures not reported')),
        groupsUpserted: groups => groups.forEach(group => this.memory.groups.set(group)),
        groupsUpdated: updates => updates.forEach(update => this.memory.groups.applyUpdate(update)),
        participantsChanged: event => this.memory.groups.applyParticipants(event, ownIds()),
      }),
    )
  }

  private async onUpdate(socket: SocketLike, generation: number, update: Partial<ConnectionState>): Promise<void> {
    if (generation !== this.slot.generation) return
    if (update.qr) await this.onQr(socket, generation, update.qr)
    if (generation !== this.slot.generation) return
    if (update.connection === 'open') await this.onOpen(socket)
    else if (update.connection === 'close') await this.onClose(generation, update.lastDisconnect?.error)
  }

  private async onQr(socket: SocketLike, generation: number, qr: string): Promise<void> {
    this.slot.stopWatch()
    const linking = this.linking
    if (!linking) {
      this.deps.logger.warn({ deviceId: this.deps.deviceId }, 'WhatsApp asked for a new link without a link request; closing')
      await this.slot.retire()
      return this.report.set('closed', { reason: 'not linked' })
    }
    const output = this.deps.options.qrOutput
    if (output && linking.code === undefined)
      void printQr(qr, output, `Scan this QR in WhatsApp > Linked devices (device ${this.deps.deviceId}):`).catch(() => undefined)
    try {
      if (await linking.onQr(socket, qr, this.deps.options.sendTimeoutMs)) await this.report.emit({ type: 'qr', deviceId: this.deps.deviceId, qr })
    } catch (error) {
      if (generation === this.slot.generation) await this.endLink(toTransportError(error, 'pairing code'), 'the pairing code was refused')
    }
  }

  private async onOpen(socket: SocketLike): Promise<void> {
    this.slot.stopWatch()
    const user = socket.user
    this.openedAt = Date.now()
    this.restarts = 0
    this.unreachable = undefined
    this.failLink(new TransportError('already-connected', 'the device connected'))
    await this.report.set('open', {
      phone: phoneOf(user?.id) ?? (user?.id ? userOf(user.id) : this.report.phone),
      lid: user?.lid ? normalizeJid(user.lid) : this.report.lid,
      reason: undefined,
    })
  }

  private async onClose(generation: number, error: unknown): Promise<void> {
    if (generation !== this.slot.generation) return
    this.slot.release()
    this.deps.logger.info({ deviceId: this.deps.deviceId, reason: describeClose(error), err: error }, 'socket closed')
    await this.afterClose(error)
  }

  /** End `socket` ourselves for `problem` and apply the policy, without waiting for Baileys to report the close. */
  private async abandon(socket: SocketLike, generation: number, problem: ConnectionProblem): Promise<void> {
    if (generation !== this.slot.generation || this.slot.socket !== socket) return
    this.slot.quiet()
    this.deps.logger.warn({ deviceId: this.deps.deviceId, reason: problem.reason }, 'closing a socket that is not working')
    void withTimeout(socket.end(problem), 5_000, 'closing the socket').catch(() => undefined)
    await this.afterClose(problem)
  }

  /** Apply the connection policy after the current socket ended with `error` (or could not be created). */
  private async afterClose(error: unknown): Promise<void> {
    const paired = this.deps.auth.paired()
    const action = closeAction(error, paired)
    if (this.openedAt !== undefined && Date.now() - this.openedAt >= this.deps.options.reconnect.stableAfterMs) this.attempts = 0
    this.openedAt = undefined
    const generation = this.slot.generation
    const reason = describeClose(error)
    this.unreachable = action.kind === 'reconnect' && action.unreachable ? reason : undefined
    if (this.unreachable) this.deps.logger.warn({ deviceId: this.deps.deviceId, reason, err: error }, 'WhatsApp cannot be reached')
    if (action.kind === 'restart' && this.restarts++ < 3) {
      if (paired) await this.report.set('connecting', { reason: undefined })
      if (generation === this.slot.generation) await this.openSocket()
      return
    }
    if (action.kind === 'logged-out') {
      if (paired) await this.report.set('connecting', { reason: `${reason}; deleting its credentials` }) // not open (nor closed, to be reopened) meanwhile
      await this.deps.auth.clear().catch(err => this.deps.logger.error({ err }, 'deleting the credentials of a logged-out device failed'))
      this.memory.forgetAccount()
      if (generation !== this.slot.generation && this.report.state === 'linking') return // reported past a failed delete or a stop (keys gone), not over a newer link
      this.failLink(new TransportError('failed', 'WhatsApp refused the link'))
      return this.report.set(paired ? 'logged-out' : 'closed', { phone: undefined, lid: undefined, reason })
    }
    if (action.kind === 'replaced' || action.kind === 'stop') {
      this.failLink(new TransportError('failed', reason))
      return this.report.set(action.kind === 'replaced' ? 'replaced' : 'closed', { reason, ...(action.kind === 'stop' ? { refused: true } : {}) })
    }
    if (action.kind === 'link-expired')
      return this.endLink(new TransportError('timeout', 'the QR codes expired'), 'link expired: the QR was not scanned in time')
    if (action.kind === 'reconnect' && action.outdatedVersion) this.deps.version.invalidate()
    if (!paired) {
      const linking = this.linking
      const failure = new TransportError(this.unreachable && !linking?.settled ? 'unreachable' : 'failed', reason, { cause: error })
      if (!linking || linking.requested || ++this.linkRetries > 3 || failure.code === 'unreachable') return this.endLink(failure, `link interrupted: ${reason}`)
    }
    const delay = backoffDelay(this.attempts++, this.deps.options.reconnect, this.deps.random)
    this.slot.schedule(delay, () => this.openSocket())
    // Paired (the phone scanned or entered the code): the device is linked and reconnecting, never offered to a new link that would wipe it.
    await this.report.set(this.linking && !paired ? 'linking' : 'connecting', { reason: `${reason}; reconnecting in ${Math.ceil(delay / 1000)} s` })
  }

  /** The link failed or expired: reject a pending link() and report the session closed. */
  private async endLink(error: TransportError, reason: string): Promise<void> {
    this.failLink(error)
    await this.slot.retire()
    await this.report.set('closed', { reason })
  }

  private async linkTimedOut(attempt: LinkAttempt): Promise<void> {
    if (this.linking === attempt) await this.endLink(new TransportError('timeout', 'WhatsApp sent no QR in time'), 'link timed out')
  }

  private failLink(error: TransportError): void {
    this.linking?.reject(error)
    this.linking = undefined
  }
}
