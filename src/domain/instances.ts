import { randomBytes } from 'node:crypto'
import { EventEmitter } from 'node:events'
import { hostname } from 'node:os'
import type { Logger } from '../logger.ts'
import { reachOf, supportsAtomic, type Storage } from '../ports/storage.ts'
import { Collection } from '../store/collection.ts'
import type { KeyedLock } from '../store/keyed-lock.ts'
import { hostTag, ownStamp, processAlive } from '../store/process-alive.ts'
import { InstanceView, monotonicNow, type InstanceRecord } from './instance-view.ts'

/**
 * How much longer than `ttlMs` a record lives in a shared store (Redis, PostgreSQL): its expiry is
 * stamped by the writer's clock and judged by each reader's, and a reader that finds it expired takes
 * its instance for gone (and its devices). Only records nobody removed need the expiry (liveness is the
 * counter moving), so it is long: hosts' clocks 10 minutes apart still never part a live instance from
 * its devices (30 s did: a host 42 s ahead took a live instance's devices, two sessions of each).
 */
const RECORD_EXPIRY_MARGIN_MS = 10 * 60_000

/** Timing of the instance registry. */
export interface InstanceSettings {
  /** How often an instance renews its record (and reads who else is alive). */
  heartbeatMs: number
  /** An instance whose record was not renewed for this long is gone: its claims pass to the others. */
  ttlMs: number
}

/** Who is alive, as claims on shared work need to know it: this process's id, whether a claim's instance lives, departures. */
export interface Liveness {
  readonly id: string
  isAlive(instanceId: string | undefined): boolean
  onDeparture(listener: (gone: string[]) => void): void
  /** Read the instance's record now: true while it is still gone (absent, or silent); false once it registered again (back from a pause) or beats. Absent: `isAlive` is the truth. */
  confirmGone?(instanceId: string): Promise<boolean>
}

/** Whether this instance is fenced (its heartbeat late: another may judge it gone) now, and how many fences it has had (one raised and lifted since a step began moves it). */
export interface Fence {
  readonly fenceUp: boolean
  readonly fenceCount: number
}

/** The mark of a step on shared work that begins now (read before its claim is written): the fence count, or NaN while fenced (back from a pause, its heartbeat not yet in the store: its claim may land first and be taken for a gone process's), which no count matches. */
export function fenceMark(fence: Fence): number {
  return fence.fenceUp ? NaN : fence.fenceCount
}

/** Whether a step marked `mark` may still act on what it claimed (a POST, a send): not fenced now, and no fence raised since the mark (docs/scaling.md). */
export function unfencedSince(fence: Fence, mark: number): boolean {
  return !fence.fenceUp && fence.fenceCount === mark
}

/** The registry of live gateway processes (`instance:<id>`, heartbeats every `heartbeatMs`), fencing this one while its heartbeat is late (docs/scaling.md). */
export class Instances implements Fence {
  /** `<host>-<pid>-<start time, base 36>-<random>`: an id tells when its instance started. */
  readonly id = `${hostTag()}-${process.pid}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`
  private readonly records: Collection<InstanceRecord>
  private record: InstanceRecord
  /** Who is alive as of the last heartbeat: the Liveness that claims on shared work are judged by. */
  readonly view: InstanceView
  private timer: NodeJS.Timeout | undefined
  /** `fence`: the heartbeat is late (let go of what is held); `rejoin`: registered again after the others took it for gone or after a fence; `beat`: a heartbeat reached the store. */
  readonly events = new EventEmitter<{ fence: []; rejoin: []; beat: [] }>()
  /** Fenced once two thirds of the ttl passed since the last heartbeat the store took was sent (a third before anyone may judge it gone). */
  private readonly fenceMs: number
  /** When the last heartbeat the store took was sent (monotonic). */
  private lastSent = monotonicNow()
  private fenced = false
  private fences = 0
  /** The highest heartbeat counter this process has written or tried to: every write carries a new one (one whose answer was lost may have landed). */
  private beatTried = 0
  private beating: Promise<void> | undefined // the heartbeat under way: a stop waits for it (no record renewed or re-registered after its removal)
  private readonly recordTtlMs: number
  private load = 0
  private stopped = false
  /** Its devices handed back (a graceful stop): its records say `leaving` from then on. */
  private handedBack = false

  constructor(
    private readonly storage: Storage,
    lock: KeyedLock,
    private readonly settings: InstanceSettings,
    private readonly logger: Logger,
    url?: string,
  ) {
    this.records = new Collection(storage, lock, 'instance')
    this.view = new InstanceView(this.id, this.records, settings.ttlMs, settings.heartbeatMs, logger)
    this.fenceMs = (settings.ttlMs * 2) / 3
    // On a shared store a record outlives the ttl by RECORD_EXPIRY_MARGIN_MS (readers judge its expiry by their clocks).
    this.recordTtlMs = settings.ttlMs + (reachOf(storage) === 'network' ? RECORD_EXPIRY_MARGIN_MS : 0)
    const now = Date.now()
    this.record = { id: this.id, host: hostname(), ...ownStamp(), startedAt: now, heartbeatAt: now, beat: 0, ...(url ? { url } : {}) }
  }

  /** Register, learn who is alive and start the heartbeat; throws what to change when this process may not share the store with a live instance. */
  async start(cluster: boolean): Promise<void> {
    const reach = reachOf(this.storage)
    if (cluster) refuseCluster(this.storage, reach)
    for (;;) {
      const sentAt = monotonicNow()
      await this.records.put(this.id, this.record, this.recordTtlMs)
      this.taken(sentAt)
      await this.view.refresh(this.record)
      const blocking = inTheWay(this.record, this.view.liveRecords, cluster, reach, supportsAtomic(this.storage))
      if (!blocking) break
      await this.records.remove(this.id)
      if (!(await this.heartbeatLapsed(blocking.record))) throw new Error(blocking.refusal)
      this.view.markGone(blocking.record.id)
    }
    this.timer = setInterval(() => void this.beat(), this.settings.heartbeatMs)
    this.timer.unref()
  }

  /** Whether this instance may hold things for the others now: registered, its heartbeat not late, not stopping. */
  get standing(): boolean {
    return !this.fenceUp && !this.stopped && this.timer !== undefined
  }

  /** Fences so far: a step that began at one count and ends at another was cut by a fence. */
  get fenceCount(): number {
    return this.fences
  }

  /** The heartbeat is late (even before a tick raised the fence), or none since reached the store: judged now, by the monotonic clock. */
  get fenceUp(): boolean {
    return this.fenced || monotonicNow() - this.lastSent >= this.fenceMs
  }

  /** A live instance's record: as of the last heartbeat, or read from the store when it is newer than that. */
  recordOf(instanceId: string): Promise<InstanceRecord | undefined> {
    return this.view.recordOf(instanceId)
  }

  /** How many device sessions this instance holds (told to the others with the next heartbeat). */
  setLoad(devices: number): void {
    this.load = devices
  }

  /** Tell the others at once (a heartbeat now) that this instance handed its devices back: they take them within their next heartbeat, not at its departure. */
  async leaving(): Promise<void> {
    this.handedBack = true
    await this.beating
    await this.beat()
  }

  /** Leave the registry (a graceful stop): the others take over this process's work at once. */
  async stop(): Promise<void> {
    this.stopped = true
    clearInterval(this.timer)
    await this.beating
    await this.records.removeIfEqual(this.id, this.record).catch(err => this.logger.warn({ err }, 'instance record not removed'))
  }

  /** Renew this record with the next counter (re-register when it was removed), then refresh who is alive; check the fence on every tick. */
  private async beat(): Promise<void> {
    this.fenceIfLate()
    if (this.stopped || this.beating) return
    await (this.beating = this.renew().finally(() => (this.beating = undefined)))
  }

  private async renew(): Promise<void> {
    const wasFenced = this.fenceUp
    // A counter never written before, even after a write whose answer was lost landed: the same one again would not move it for the
    // others, who would judge this instance gone a ttl after they first saw it, while this one reckons its fence from this later write.
    this.beatTried = Math.max(this.beatTried, this.record.beat ?? 0) + 1
    const next = { ...this.record, heartbeatAt: Date.now(), beat: this.beatTried, devices: this.load, ...(this.handedBack ? { leaving: true as const } : {}) }
    const sentAt = monotonicNow()
    try {
      let rejoined = false
      if (!(await this.records.replace(this.id, this.record, next, this.recordTtlMs))) {
        this.logger.warn({ instanceId: this.id }, 'this instance was taken for gone (no heartbeat for too long); registering again')
        await this.records.put(this.id, next, this.recordTtlMs)
        rejoined = true
      }
      this.record = next
      this.taken(sentAt)
      if (this.fenceUp) return
      if (rejoined || wasFenced) this.events.emit('rejoin')
      await this.view.refresh(this.record)
      this.events.emit('beat')
    } catch (err) {
      this.logger.warn({ err }, 'instance heartbeat failed')
      this.fenceIfLate()
    }
  }

  /** Wait up to a ttl and a heartbeat for `other`'s heartbeat to lapse: true once its record (or process) is gone or stood unchanged (then removed), false once renewed. */
  private async heartbeatLapsed(other: InstanceRecord): Promise<boolean> {
    const waitMs = this.settings.ttlMs + this.settings.heartbeatMs
    this.logger.warn(
      { other: other.id, pid: other.pid, host: other.host, waitMs },
      'another gateway process is registered on this store: waiting for its heartbeat to lapse (it may be dying) before refusing to start',
    )
    const until = Date.now() + waitMs
    const pollMs = Math.max(50, Math.min(500, Math.floor(this.settings.heartbeatMs / 4)))
    let latest = other
    while (Date.now() < until) {
      await new Promise(resolve => setTimeout(resolve, pollMs))
      const now = await this.records.load(other.id)
      if (now === undefined) return true
      latest = now
      if (now.host === this.record.host && !processAlive(now)) break
      if (now.heartbeatAt !== other.heartbeatAt) return false
    }
    await this.records.removeIfEqual(other.id, latest)
    this.logger.info({ other: other.id }, 'its heartbeat lapsed: starting')
    return true
  }

  /** A heartbeat sent at `sentAt` reached the store: the fence lifts unless it waited past the limit on the way. */
  private taken(sentAt: number): void {
    this.lastSent = sentAt
    if (monotonicNow() - sentAt < this.fenceMs) this.fenced = false
  }

  private fenceIfLate(): void {
    if (this.fenced || monotonicNow() - this.lastSent < this.fenceMs) return
    this.fenced = true
    this.fences++
    this.logger.warn({ instanceId: this.id }, 'heartbeat late: letting go of device sessions before another instance takes them')
    this.events.emit('fence')
  }
}

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

/** The live instance in the way of `own`'s start (the store is not for several, or one of this host has its address), with why. */
function inTheWay(
  own: InstanceRecord,
  live: Iterable<InstanceRecord>,
  cluster: boolean,
  reach: NonNullable<Storage['reach']>,
  atomic: boolean,
): { record: InstanceRecord; refusal: string } | undefined {
  for (const record of live) {
    const other = record.id
    if (other === own.id) continue
    const refusal = !atomic
      ? `Another gateway instance (${other}) uses this store, and the store cannot do the atomic steps (add, compareAndSet, deleteIfEqual, increment) several processes need: use Redis or PostgreSQL, or run one process`
      : reach !== 'network'
        ? `Another gateway process (${other}) uses this store, which is for one process at a time (SQLite or memory): stop it, or move to Redis or PostgreSQL with cluster mode`
        : !cluster
          ? `Another gateway instance (${other}) is live on this store: set GATEWAY_CLUSTER_SECRET and GATEWAY_ADVERTISE_URL (the cluster option) on every instance to run several, or stop the other one`
          : record.host === own.host && record.url !== undefined && record.url === own.url
            ? `Another gateway instance (${other}, pid ${record.pid}) of this host is registered with this instance's address (${record.url}) and keeps heartbeating: stop it, or give this one another port or GATEWAY_ADVERTISE_URL`
            : undefined
    if (refusal) return { record, refusal }
  }
  return undefined
}
