import type { CacheStore } from '@whiskeysockets/baileys'
import { TransportError } from 'zapgate'
import type { Logger } from 'zapgate'
import { BoundedMap } from 'zapgate/adapter-kit'
import { boundedCacheStore } from '../cache.ts'
import type { ConnectionWatch } from './connection-watch.ts'
import { withTimeout } from '../errors.ts'
import { GroupCache } from '../group-cache.ts'
import type { SocketLike } from '../types.ts'

/**
 * What a device session keeps besides its policy: the current socket and what hangs on it (its
 * generation, so that events of an older socket are ignored; its listeners; the watch until it opens;
 * the pending reconnect), and the device's bounded in-memory state. The session builds on it; the
 * socket's events run one at a time on `queue`.
 */
export class SocketSlot {
  /** Key cache of the signal store, kept across reconnects, flushed with the credentials. */
  readonly keyCache: CacheStore = boundedCacheStore(5_000, 5 * 60_000)
  /** Group metadata for Baileys' cachedGroupMetadata, kept current from group events. */
  readonly groups = new GroupCache()
  /** Ids of the gateway's own sends, so that their echoes are not reported as received. */
  readonly ownIds = new BoundedMap<string, true>(2_000, 3_600_000)
  /** `chat:id` of messages already reported (dedupe of upserts). */
  readonly seen = new BoundedMap<string, true>(5_000, 24 * 3_600_000)
  /** Work that outlives its event (media downloads); cut short and awaited at shutdown. */
  readonly background = new Set<Promise<unknown>>()
  /** Resolves when the session shuts down: background work stops waiting and reports what it has. */
  readonly stopping: Promise<void>
  private stopped!: () => void
  protected socket?: SocketLike
  protected generation = 0
  protected timer?: NodeJS.Timeout
  protected watch?: ConnectionWatch
  private detach?: () => void
  private events: Promise<void> = Promise.resolve()

  constructor(
    protected readonly slotDeviceId: string,
    protected readonly slotLogger: Logger,
  ) {
    this.stopping = new Promise(resolve => (this.stopped = resolve))
  }

  /** Keep `work` until it settles (shutdown waits for it). */
  track(work: Promise<unknown>): void {
    this.background.add(work)
    void work.finally(() => this.background.delete(work)).catch(() => undefined)
  }

  /** Tell background work to stop waiting, then wait for it to settle. */
  protected async stopBackground(): Promise<void> {
    this.stopped()
    await Promise.allSettled([...this.background])
  }

  /** Forget what belongs to the linked account: cached signal keys and group metadata (a new link may be another account). */
  protected forgetAccount(): void {
    void this.keyCache.flushAll()
    this.groups.clear()
  }

  /** Make `socket` the current one, with the function that detaches its listeners. */
  protected hold(socket: SocketLike, detach: () => void): void {
    this.socket = socket
    this.detach = detach
  }

  /** Run `work` after the socket events queued before it (connection updates, watch reports). */
  protected queue(work: () => Promise<void>): void {
    this.events = this.events.then(work).catch(err => this.slotLogger.error({ err, deviceId: this.slotDeviceId }, 'connection update failed'))
  }

  /** Stop the current socket (and any pending reconnect) without reacting to its close. */
  protected async retire(): Promise<void> {
    const socket = this.socket
    this.quiet()
    if (socket) await withTimeout(socket.end(undefined), 5_000, 'closing the socket').catch(() => undefined)
  }

  /** Make the current socket's events irrelevant: new generation, no timers, no listeners, no socket. */
  protected quiet(): void {
    this.generation++
    this.release()
  }

  /** Let go of the current socket: no timers, no listeners, no socket. */
  protected release(): void {
    this.quietTimers()
    this.detachSocket()
    this.socket = undefined
  }

  /** The current socket, or TransportError('not-connected'). */
  protected requireSocket(): SocketLike {
    if (!this.socket) throw new TransportError('not-connected', 'the device is not connected')
    return this.socket
  }

  /** Run `open` after `delayMs`, unless another socket (or none) is wanted by then. */
  protected schedule(delayMs: number, open: () => Promise<void>): void {
    const generation = this.generation
    this.timer = setTimeout(() => {
      this.timer = undefined
      if (generation === this.generation) void open().catch(err => this.slotLogger.error({ err, deviceId: this.slotDeviceId }, 'reconnect failed'))
    }, delayMs)
    this.timer.unref?.()
  }

  /** Remove the current socket's listeners. */
  protected detachSocket(): void {
    this.detach?.()
    this.detach = undefined
  }

  /** Cancel the pending reconnect and the open-watch. */
  protected quietTimers(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    this.watch?.stop()
    this.watch = undefined
  }
}
