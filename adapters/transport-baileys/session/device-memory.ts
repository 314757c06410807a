import type { CacheStore } from '@whiskeysockets/baileys'
import { BoundedMap, KeyedLock } from 'zapgate/adapter-kit'
import { signalKeyCache } from '../cache.ts'
import { GroupCache } from '../group-cache.ts'
import type { MessageScope } from '../message-scope.ts'
import type { MessageStore } from '../message-store.ts'

/**
 * What a device keeps across its sockets: its message store (in storage), bounded caches (signal
 * keys, group metadata, own send ids, messages already reported), the chain its incoming messages
 * are handled on, and the background work (media downloads) that outlives the event that started it. Owned by the device's session; the transport,
 * send, receive and groups read it.
 */
export class DeviceMemory {
  /** Key cache of the signal store (its view of the process-wide one), kept across reconnects, flushed with the credentials. */
  readonly keyCache: CacheStore = signalKeyCache.view()
  /** Group metadata for Baileys' cachedGroupMetadata, kept current from group events. */
  readonly groups = new GroupCache()
  /** Ids of the gateway's own sends, so that their echoes are not reported as received. */
  readonly ownIds = new BoundedMap<string, true>(2_000, 3_600_000)
  /** Messages already looked at, by id: the scopes (chat, direction, group sender) seen with it (dedupe of upserts). */
  readonly seen = new BoundedMap<string, MessageScope[]>(5_000, 24 * 3_600_000)
  /** The sockets' incoming messages and delivery updates, handled one after another (one key of a KeyedLock). */
  private readonly incoming = new KeyedLock()
  /** Reports of media waiting on the download queue, by message id (settled once reported): a revoke of one is reported after it. */
  readonly mediaReports = new Map<string, Promise<unknown>>()
  /** Work that outlives its event (media downloads); cut short and awaited at shutdown. */
  readonly background = new Set<Promise<unknown>>()
  /** Resolves when the session shuts down or hands the device over: background work stops waiting and reports what it has. */
  get stopping(): Promise<void> {
    return this.stoppingNow
  }
  private stoppingNow!: Promise<void>
  private stopped!: () => void

  constructor(
    /** Keys (and some contents) of the device's messages. */
    readonly messages: MessageStore,
  ) {
    this.arm()
  }

  /** Keep `work` until it settles (shutdown waits for it). */
  track(work: Promise<unknown>): void {
    this.background.add(work)
    void work.finally(() => this.background.delete(work)).catch(() => undefined)
  }

  /** Handle `work` (a socket's messages or delivery updates) after those handed over before it; its failure goes to `onError`. */
  handleIncoming(work: () => Promise<unknown>, onError: (err: unknown) => void): void {
    this.incoming.run(INCOMING, work).catch(onError)
  }

  /** An ended socket's work done: its messages (their receipts sent: WhatsApp sends them no more) reported and remembered, those queued meanwhile too; then downloads under way cut short (reported with what they have). */
  async endSocketWork(): Promise<void> {
    // Until the chain is empty: work queued while waiting is waited for too.
    do await this.incoming.run(INCOMING, async () => {})
    while (this.incoming.size > 0)
    await this.stopBackground()
  }

  /** Tell background work to stop waiting, then wait for it to settle. */
  async stopBackground(): Promise<void> {
    this.stopped()
    await Promise.allSettled([...this.background])
    this.arm() // work a later socket of this session starts waits again
  }

  private arm(): void {
    this.stoppingNow = new Promise(resolve => (this.stopped = resolve))
  }

  /** Forget what belongs to the linked account: cached signal keys and group metadata (a new link may be another account). */
  forgetAccount(): void {
    void this.keyCache.flushAll()
    this.groups.clear()
  }
}

/** The one key the incoming work is chained under. */
const INCOMING = 'incoming'
