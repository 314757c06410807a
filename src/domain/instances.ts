import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { Logger } from '../logger.ts'
import { reachOf, supportsAtomic, type Storage } from '../ports/storage.ts'
import { Collection } from '../store/collection.ts'
import type { KeyedLock } from '../store/keyed-lock.ts'
import { hostTag, ownStamp } from '../store/process-alive.ts'
import { CLOCK_SKEW_ALLOWANCE_MS } from './clock.ts'
import { HeartbeatFence, monotonicNow } from './heartbeat-watch.ts'
import { heartbeatLapsed, inTheWay } from './instance-lapse.ts'
import { InstanceView, type DepartureListener, type InstanceRecord } from './instance-view.ts'

/** Timing of the instance registry. */
export interface InstanceSettings {
  /** How often an instance renews its record (and reads who else is alive). */
  heartbeatMs: number
  /** An instance whose record was not renewed for this long is gone: its claims pass to the others. */
  ttlMs: number
}

/** Who is alive, as claims on shared work need to know it. */
export interface Liveness {
  /** This process's instance id (the owner named by its claims). */
  readonly id: string
  /** Whether an instance named by a claim is alive. */
  isAlive(instanceId: string | undefined): boolean
  /** Be told when instances stop heartbeating (their claims are void from then on). */
  onDeparture(listener: DepartureListener): void
}

/** The liveness of a process alone with its store (tests of parts that take claims): only itself is alive. */
export function soloLiveness(id = `solo-${randomBytes(4).toString('hex')}`): Liveness {
  return { id, isAlive: instanceId => instanceId === id, onDeparture() {} }
}

/**
 * The registry of live gateway processes in the shared store (`instance:<id>`, renewed every
 * `heartbeatMs` with a heartbeat counter that moves). A claim on shared work (a webhook event, a
 * scheduled message, a device lease) names its instance; a claim whose instance is not alive is
 * void. An instance is gone for an observer once its counter has not moved for `ttlMs` of the
 * observer's own monotonic time (HeartbeatWatch): no host's clock is compared with another's, so
 * clocks that disagree neither kill a live instance nor keep a dead one. The store's expiry of a
 * record (its ttl plus the clock allowance on a shared store) only clears records nobody removed.
 * A process that starts on a host where an earlier process of the same host is gone (its pid is not
 * running) removes that one's record at once, so a restarted gateway resumes its own interrupted
 * work without waiting.
 *
 * An instance whose heartbeat is late (two thirds of `ttlMs` since the last heartbeat the store
 * took was sent, by its own monotonic clock) is fenced: it lets go of what it holds for the others
 * before any of them may judge it gone, and holds nothing new (`standing` is false) until a
 * heartbeat sent after the fence reached the store.
 */
export class Instances implements Liveness {
  /** `<host>-<pid>-<start time, base 36>-<random>`: an id tells when its instance started. */
  readonly id = `${hostTag()}-${process.pid}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`
  private readonly records: Collection<InstanceRecord>
  private record: InstanceRecord
  /** Who else is alive, as of the last heartbeat. */
  private readonly view: InstanceView
  private timer: NodeJS.Timeout | undefined
  private readonly fenceListeners: (() => void)[] = []
  private readonly beatListeners: (() => void)[] = []
  private readonly rejoinListeners: (() => void)[] = []
  /** Whether this instance's heartbeat is late. */
  private readonly fence: HeartbeatFence
  /** A heartbeat is under way (the next tick does not start another). */
  private beating = false
  /** The store ttl of this instance's record. */
  private readonly recordTtlMs: number
  private load = 0
  private stopped = false

  constructor(
    private readonly storage: Storage,
    lock: KeyedLock,
    private readonly settings: InstanceSettings,
    private readonly logger: Logger,
    url?: string,
  ) {
    this.records = new Collection(storage, lock, 'instance')
    this.view = new InstanceView(this.id, this.records, settings.ttlMs, settings.heartbeatMs, logger)
    this.fence = new HeartbeatFence(settings.ttlMs)
    // Readers on other hosts judge the store's expiry stamp by their own clocks: on a shared store a
    // record outlives the ttl by the clock allowance, so a reader ahead still sees a live one.
    this.recordTtlMs = settings.ttlMs + (reachOf(storage) === 'network' ? CLOCK_SKEW_ALLOWANCE_MS : 0)
    const now = Date.now()
    this.record = { id: this.id, host: hostname(), ...ownStamp(), startedAt: now, heartbeatAt: now, beat: 0, ...(url ? { url } : {}) }
  }

  /**
   * Register this process, clear the records of gone processes of this host, learn who is alive and
   * start the heartbeat. Throws a start-up error naming what to change when this process may not
   * share the store: cluster mode on a store that cannot be shared across hosts or lacks the atomic
   * steps; or another instance alive while this one is not in cluster mode, or on such a store.
   * Before refusing it waits for the other's heartbeat to lapse (it may be dying; see instance-lapse.ts).
   */
  async start(cluster: boolean): Promise<void> {
    const reach = reachOf(this.storage)
    if (cluster) refuseCluster(this.storage, reach)
    for (;;) {
      const sentAt = monotonicNow()
      await this.records.put(this.id, this.record, this.recordTtlMs)
      this.fence.taken(sentAt)
      await this.view.refresh(this.record)
      const blocking = inTheWay(this.record, this.view.liveRecords, other => sharingRefusal(other, cluster, reach, supportsAtomic(this.storage)))
      if (!blocking) break
      await this.records.remove(this.id)
      if (!(await heartbeatLapsed(this.records, blocking.record, this.record.host, this.settings, this.logger))) throw new Error(blocking.refusal)
      this.view.markGone(blocking.record.id)
    }
    this.timer = setInterval(() => void this.beat(), this.settings.heartbeatMs)
    this.timer.unref()
  }

  /** Whether the instance named by a claim is alive, as of the last heartbeat (this one always is). */
  isAlive(instanceId: string | undefined): boolean {
    return this.view.isAlive(instanceId)
  }

  /**
   * Whether this instance may hold things for the others now: registered, its heartbeat not late,
   * and not stopping. A lease naming this instance is its own only while it stands.
   */
  get standing(): boolean {
    return !this.fence.up && !this.stopped && this.timer !== undefined
  }

  /** Fences so far: a step that began at one count and ends at another was cut by a fence. */
  get fenceCount(): number {
    return this.fence.count
  }

  /** Read `instanceId`'s record now and tell whether it is gone (InstanceView.confirmGone): before taking over its claim. */
  confirmGone(instanceId: string): Promise<boolean> {
    return this.view.confirmGone(instanceId)
  }

  /** The live instances, as of the last heartbeat. */
  get live(): string[] {
    return this.view.live
  }

  /** The live instances' records as of the last heartbeat (this one's included). */
  get liveRecords(): InstanceRecord[] {
    return this.view.liveRecords
  }

  /** A live instance's record: as of the last heartbeat, or read from the store when it is newer than that. */
  recordOf(instanceId: string): Promise<InstanceRecord | undefined> {
    return this.view.recordOf(instanceId)
  }

  /** How many device sessions this instance holds (told to the others with the next heartbeat). */
  setLoad(devices: number): void {
    this.load = devices
  }

  /**
   * Be told when this instance's heartbeat is late enough that the others may soon take it for gone
   * (the store did not take it, or the process was paused): what it holds on their behalf, such as
   * device sessions, must be let go before they take it over.
   */
  onFence(listener: () => void): void {
    this.fenceListeners.push(listener)
  }

  /** Be told when this instance registers again after the others took it for gone (what it held may have been taken over). */
  onRejoin(listener: () => void): void {
    this.rejoinListeners.push(listener)
  }

  /** Be told after each heartbeat that reached the store (and refreshed who is alive). */
  onBeat(listener: () => void): void {
    this.beatListeners.push(listener)
  }

  /** Be told when instances stop heartbeating (their claims are void from then on). */
  onDeparture(listener: DepartureListener): void {
    this.view.onDeparture(listener)
  }

  /** Leave the registry (a graceful stop): the others take over this process's work at once. */
  async stop(): Promise<void> {
    this.stopped = true
    clearInterval(this.timer)
    await this.records.removeIfEqual(this.id, this.record).catch(err => this.logger.warn({ err }, 'instance record not removed'))
  }

  // --- Internal helpers ---

  /**
   * Renew this record with the next counter value (re-register when it was removed meanwhile, e.g.
   * after a long pause), then refresh who is alive. A fenced instance stands again only after a
   * heartbeat sent after the fence reached the store: the others then see its counter move.
   */
  private async beat(): Promise<void> {
    // The fence is checked on every tick, even while a heartbeat hangs on a store that does not answer.
    this.fenceIfLate()
    if (this.stopped || this.beating) return
    this.beating = true
    try {
      await this.renew()
    } finally {
      this.beating = false
    }
  }

  private async renew(): Promise<void> {
    const wasFenced = this.fence.up
    const next = { ...this.record, heartbeatAt: Date.now(), beat: (this.record.beat ?? 0) + 1, devices: this.load }
    const sentAt = monotonicNow()
    try {
      let rejoined = false
      if (!(await this.records.replace(this.id, this.record, next, this.recordTtlMs))) {
        this.logger.warn({ instanceId: this.id }, 'this instance was taken for gone (no heartbeat for too long); registering again')
        await this.records.put(this.id, next, this.recordTtlMs)
        rejoined = true
      }
      this.record = next
      // A heartbeat that waited past the fence time in a queue does not lift the fence: the next one will.
      this.fence.taken(sentAt)
      if (this.fence.up) return
      if (rejoined || wasFenced) for (const listener of this.rejoinListeners) listener()
      await this.view.refresh(this.record)
      for (const listener of this.beatListeners) listener()
    } catch (err) {
      this.logger.warn({ err }, 'instance heartbeat failed')
      this.fenceIfLate()
    }
  }

  /**
   * Past two thirds of the time-to-live without a heartbeat taken (a paused process wakes here
   * first), let go before the others may take over: no two instances ever hold one device.
   */
  private fenceIfLate(): void {
    if (!this.fence.raiseIfLate()) return
    this.logger.warn({ instanceId: this.id }, 'heartbeat late: letting go of device sessions before another instance takes them')
    for (const listener of this.fenceListeners) listener()
  }
}

// --- Internal helpers ---

/** Cluster mode needs a store every host reaches, with the atomic steps. */
function refuseCluster(storage: Storage, reach: NonNullable<Storage['reach']>): void {
  if (reach !== 'network')
    throw new Error(
      `Cluster mode (GATEWAY_CLUSTER_SECRET) needs a store every instance reaches: Redis or PostgreSQL (this one is ${reach === 'host' ? 'a file of this host, such as SQLite' : 'in this process'})`,
    )
  if (!supportsAtomic(storage))
    throw new Error(
      'Cluster mode (GATEWAY_CLUSTER_SECRET) needs a store with the atomic steps (add, compareAndSet, deleteIfEqual, increment): use the Redis or PostgreSQL store',
    )
}

/** Why this process may not share the store with the live instance `other`, or undefined when it may. */
function sharingRefusal(other: string, cluster: boolean, reach: NonNullable<Storage['reach']>, atomic: boolean): string | undefined {
  if (!atomic)
    return `Another gateway instance (${other}) uses this store, and the store cannot do the atomic steps (add, compareAndSet, deleteIfEqual, increment) several processes need: use Redis or PostgreSQL, or run one process`
  if (reach !== 'network')
    return `Another gateway process (${other}) uses this store, which is for one process at a time (SQLite or memory): stop it, or move to Redis or PostgreSQL with cluster mode`
  if (!cluster)
    return `Another gateway instance (${other}) is live on this store: set GATEWAY_CLUSTER_SECRET and GATEWAY_ADVERTISE_URL (the cluster option) on every instance to run several, or stop the other one`
  return undefined
}
