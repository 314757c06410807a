import { TransportError } from 'zapgate'
import type { Logger } from 'zapgate'
import type { ConnectionWatch } from './connection-watch.ts'
import { toTransportError, withTimeout } from '../errors.ts'
import type { SocketLike } from '../types.ts'

/**
 * A device's current socket and what hangs on it: its generation (events of an older socket are
 * ignored), its listeners, the watch until it opens, the pending reconnect, and the queue on which
 * its events run one at a time. The session holds one and decides, by its policy, what to do with it.
 */
export class SocketSlot {
  private current?: SocketLike
  private currentGeneration = 0
  private timer?: NodeJS.Timeout
  private watch?: ConnectionWatch
  private detach?: () => void
  private events: Promise<void> = Promise.resolve()

  constructor(
    private readonly deviceId: string,
    private readonly logger: Logger,
  ) {}

  /** The current socket (open or not), if any. */
  get socket(): SocketLike | undefined {
    return this.current
  }

  /** The current socket's generation: compared by event handlers that captured an older one. */
  get generation(): number {
    return this.currentGeneration
  }

  /** Whether a reconnect is scheduled. */
  get reconnectPending(): boolean {
    return this.timer !== undefined
  }

  /** Let go of the current socket and start a new generation for the next one; returns it. */
  next(): number {
    this.release()
    return ++this.currentGeneration
  }

  /** Make `socket` the current one, with the function that detaches its listeners. */
  hold(socket: SocketLike, detach: () => void): void {
    this.current = socket
    this.detach = detach
  }

  /** Keep `watch` (over the current socket until it opens); stopped with the socket. */
  watchUntilOpen(watch: ConnectionWatch): void {
    this.watch = watch
  }

  /** Stop the open-watch (the socket opened or showed a QR). */
  stopWatch(): void {
    this.watch?.stop()
  }

  /** Run `work` after the socket events queued before it (connection updates, watch reports). */
  queue(work: () => Promise<void>): void {
    this.events = this.events.then(work).catch(err => this.logger.error({ err, deviceId: this.deviceId }, 'connection update failed'))
  }

  /** Stop the current socket (and any pending reconnect) without reacting to its close. */
  async retire(): Promise<void> {
    const socket = this.current
    this.quiet()
    if (socket) await withTimeout(socket.end(undefined), 5_000, 'closing the socket').catch(() => undefined)
  }

  /**
   * Unlink `socket` (the current one, open) on WhatsApp's side and let it go: Baileys' logout (its remove-companion-device frame, then its
   * end). Rejected or not done within `timeoutMs` (or before `signal` aborts), WhatsApp did not hear of it: the socket is ended and the
   * failure returned. No socket: the current one (or a pending reconnect) is retired.
   */
  async unlink(socket: SocketLike | undefined, timeoutMs: number, signal?: AbortSignal): Promise<TransportError | undefined> {
    if (!socket) return void (await this.retire())
    this.quiet()
    try {
      await withTimeout(socket.logout(), timeoutMs, 'logout', signal)
    } catch (error) {
      void socket.end(undefined).catch(() => undefined)
      return toTransportError(error, 'logout')
    }
  }

  /** Make the current socket's events irrelevant: new generation, no timers, no listeners, no socket. */
  quiet(): void {
    this.currentGeneration++
    this.release()
  }

  /** Let go of the current socket: no timers, no listeners, no socket. */
  release(): void {
    this.quietTimers()
    this.detachSocket()
    this.current = undefined
  }

  /** The current socket, or TransportError('not-connected'). */
  requireSocket(): SocketLike {
    if (!this.current) throw new TransportError('not-connected', 'the device is not connected')
    return this.current
  }

  /** Run `open` after `delayMs`, unless another socket (or none) is wanted by then. */
  schedule(delayMs: number, open: () => Promise<void>): void {
    const generation = this.currentGeneration
    this.timer = setTimeout(() => {
      this.timer = undefined
      if (generation === this.currentGeneration) void open().catch(err => this.logger.error({ err, deviceId: this.deviceId }, 'reconnect failed'))
    }, delayMs)
    this.timer.unref?.()
  }

  // --- Internal helpers ---

  /** Remove the current socket's listeners. */
  private detachSocket(): void {
    this.detach?.()
    this.detach = undefined
  }

  /** Cancel the pending reconnect and the open-watch. */
  private quietTimers(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    this.watch?.stop()
    this.watch = undefined
  }
}
