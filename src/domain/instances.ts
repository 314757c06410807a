import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { Logger } from '../logger.ts'
import { reachOf, supportsAtomic, type Storage } from '../ports/storage.ts'
import { Collection } from '../store/collection.ts'
import type { KeyedLock } from '../store/keyed-lock.ts'
import { hostTag, ownStamp, processAlive } from '../store/process-alive.ts'
import { heartbeatLapsed, inTheWay } from './instance-lapse.ts'

/** A gateway process as the store knows it: registered at start, kept alive by its heartbeat. */
interface InstanceRecord {
  id: string
  host: string
  pid: number
  /** The pid's start time (clock ticks after boot) and boot id (Linux): a reused pid is another process. */
  startTicks?: number
  bootId?: string
  startedAt: number
  heartbeatAt: number
  /** Where other instances reach it (cluster mode). */
  url?: string
  /** Device sessions it holds, as of its last heartbeat. */
  devices?: number
}

/** Timing of the instance registry. */
export interface InstanceSettings {
  /** How often an instance renews its record (and reads who else is alive). */
  heartbeatMs: number
  /** An instance whose record was not renewed for this long is gone: its claims pass to the others. */
  ttlMs: number
}

/** What a departure callback is told: the instances that stopped heartbeating (or left). */
type DepartureListener = (gone: string[]) => void

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
 * The registry of live gateway processes in the shared store (`instance:<id>`, expiring after
 * `ttlMs` unless renewed every `heartbeatMs`). A claim on shared work (a webhook event, a scheduled
 * message) names its instance; a claim whose instance is not alive is void, so any process on any
 * host takes it over once the instance's record has expired. A process that starts on a host where
 * an earlier process of the same host is gone (its pid is not running) removes that one's record at
 * once, so a restarted gateway resumes its own interrupted work without waiting for the expiry.
 */
export class Instances implements Liveness {
  /** `<host>-<pid>-<start time, base 36>-<random>`: an id tells when its instance started. */
  readonly id = `${hostTag()}-${process.pid}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`
  private readonly records: Collection<InstanceRecord>
  private record: InstanceRecord
  private alive = new Set<string>()
  /** Instances seen to leave (departed, or a gone process of this host): never alive again, whatever their start time. */
  private readonly gone = new Set<string>()
  /** The live instances' records as of the last heartbeat (this one's included). */
  private known = new Map<string, InstanceRecord>()
  private timer: NodeJS.Timeout | undefined
  private readonly listeners: DepartureListener[] = []
  private readonly fenceListeners: (() => void)[] = []
  private readonly beatListeners: (() => void)[] = []
  private readonly rejoinListeners: (() => void)[] = []
  /** When the store last took this instance's heartbeat. */
  private lastRenewed = Date.now()
  /** When the registry was last read (instances that started since are not in `alive` yet). */
  private lastRefresh = 0
  private fenced = false
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
    const now = Date.now()
    this.record = { id: this.id, host: hostname(), ...ownStamp(), startedAt: now, heartbeatAt: now, ...(url ? { url } : {}) }
    this.alive.add(this.id)
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
      await this.records.put(this.id, this.record, this.settings.ttlMs)
      this.lastRenewed = Date.now()
      await this.refresh()
      const blocking = inTheWay(this.record, this.known.values(), other => sharingRefusal(other, cluster, reach, supportsAtomic(this.storage)))
      if (!blocking) break
      await this.records.remove(this.id)
      if (!(await heartbeatLapsed(this.records, blocking.record, this.record.host, this.settings, this.logger))) throw new Error(blocking.refusal)
      this.markGone(blocking.record.id)
    }
    this.timer = setInterval(() => void this.beat(), this.settings.heartbeatMs)
    this.timer.unref()
  }

  /** Whether the instance named by a claim is alive, as of the last heartbeat (this one always is). */
  isAlive(instanceId: string | undefined): boolean {
    if (instanceId === undefined) return false
    if (this.alive.has(instanceId)) return true
    if (this.gone.has(instanceId) || goneFromThisHost(instanceId)) return false
    // An instance that started after the last heartbeat read the registry is not in it yet: alive,
    // unless it started longer ago than a time-to-live (then its record would have been read).
    const startedAt = startTimeOf(instanceId)
    return startedAt !== undefined && startedAt > this.lastRefresh - this.settings.ttlMs
  }

  /** The live instances, as of the last heartbeat. */
  get live(): string[] {
    return [...this.alive]
  }

  /** The live instances' records as of the last heartbeat (this one's included). */
  get liveRecords(): InstanceRecord[] {
    return [...this.known.values()]
  }

  /** A live instance's record: as of the last heartbeat, or read from the store when it is newer than that. */
  async recordOf(instanceId: string): Promise<InstanceRecord | undefined> {
    const known = this.known.get(instanceId)
    if (known) return known
    const record = await this.records.load(instanceId)
    if (record) {
      this.known.set(instanceId, record)
      this.alive.add(instanceId)
    }
    return record
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
    this.listeners.push(listener)
  }

  /** Leave the registry (a graceful stop): the others take over this process's work at once. */
  async stop(): Promise<void> {
    this.stopped = true
    clearInterval(this.timer)
    await this.records.removeIfEqual(this.id, this.record).catch(err => this.logger.warn({ err }, 'instance record not removed'))
  }

  // --- Internal helpers ---

  /** Renew this record (re-register when it expired meanwhile, e.g. after a long pause), then refresh who is alive. */
  private async beat(): Promise<void> {
    if (this.stopped) return
    this.fenceIfLate()
    const next = { ...this.record, heartbeatAt: Date.now(), devices: this.load }
    try {
      if (!(await this.records.replace(this.id, this.record, next, this.settings.ttlMs))) {
        this.logger.warn({ instanceId: this.id }, 'this instance was taken for gone (no heartbeat for too long); registering again')
        await this.records.put(this.id, next, this.settings.ttlMs)
        for (const listener of this.rejoinListeners) listener()
      }
      this.record = next
      this.lastRenewed = Date.now()
      this.fenced = false
      await this.refresh()
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
    if (this.fenced || Date.now() - this.lastRenewed < (this.settings.ttlMs * 2) / 3) return
    this.fenced = true
    this.logger.warn({ instanceId: this.id }, 'heartbeat late: letting go of device sessions before another instance takes them')
    for (const listener of this.fenceListeners) listener()
  }

  private markGone(id: string): void {
    this.gone.add(id)
    // Ids never repeat; only recent ones matter (older ones are past the start-time window of isAlive).
    if (this.gone.size > 1000) this.gone.delete(this.gone.values().next().value!)
  }

  /** Read the live instances; drop the records of gone processes of this host; tell listeners who left. */
  private async refresh(): Promise<void> {
    const readAt = Date.now()
    const now = new Set<string>([this.id])
    const known = new Map<string, InstanceRecord>([[this.id, this.record]])
    for await (const [id, record] of this.records.all()) {
      if (id !== this.id && record.host === this.record.host && !processAlive(record)) {
        await this.records.removeIfEqual(id, record)
        this.markGone(id)
        continue
      }
      now.add(id)
      if (id !== this.id) known.set(id, record)
    }
    this.known = known
    this.lastRefresh = readAt
    const gone = [...this.alive].filter(id => !now.has(id))
    for (const id of gone) this.markGone(id)
    this.alive = now
    if (gone.length > 0) {
      this.logger.info({ gone }, 'gateway instances gone: taking over their work')
      for (const listener of this.listeners) listener(gone)
    }
  }
}

// --- Internal helpers ---

/** Cluster mode needs a store every host reaches, with the atomic steps. */
function refuseCluster(storage: Storage, reach: NonNullable<Storage['reach']>): void {
  if (reach !== 'network') throw new Error(`Cluster mode (GATEWAY_CLUSTER_SECRET) needs a store every instance reaches: Redis or PostgreSQL (this one is ${reach === 'host' ? 'a file of this host, such as SQLite' : 'in this process'})`)
  if (!supportsAtomic(storage)) throw new Error('Cluster mode (GATEWAY_CLUSTER_SECRET) needs a store with the atomic steps (add, compareAndSet, deleteIfEqual, increment): use the Redis or PostgreSQL store')
}

/** Why this process may not share the store with the live instance `other`, or undefined when it may. */
function sharingRefusal(other: string, cluster: boolean, reach: NonNullable<Storage['reach']>, atomic: boolean): string | undefined {
  if (!atomic) return `Another gateway instance (${other}) uses this store, and the store cannot do the atomic steps (add, compareAndSet, deleteIfEqual, increment) several processes need: use Redis or PostgreSQL, or run one process`
  if (reach !== 'network') return `Another gateway process (${other}) uses this store, which is for one process at a time (SQLite or memory): stop it, or move to Redis or PostgreSQL with cluster mode`
  if (!cluster) return `Another gateway instance (${other}) is live on this store: set GATEWAY_CLUSTER_SECRET and GATEWAY_ADVERTISE_URL (the cluster option) on every instance to run several, or stop the other one`
  return undefined
}

/** When the instance of an id started (ms since the epoch), or undefined for an id of another form. */
function startTimeOf(instanceId: string): number | undefined {
  const parts = instanceId.split('-')
  const value = parts.length >= 4 ? parseInt(parts[parts.length - 2]!, 36) : NaN
  return Number.isFinite(value) ? value : undefined
}

/** Whether an id names a process of this host that is no longer running. */
function goneFromThisHost(instanceId: string): boolean {
  const parts = instanceId.split('-')
  if (parts.length < 4 || parts.slice(0, -3).join('-') !== hostTag()) return false
  const pid = Number(parts[parts.length - 3])
  return Number.isInteger(pid) && pid > 0 && !processAlive(pid)
}

