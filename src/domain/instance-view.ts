import type { Logger } from '../logger.ts'
import { putBounded } from '../store/bounded-map.ts'
import type { Collection } from '../store/collection.ts'
import { hostTag, processAlive } from '../store/process-alive.ts'

/** A gateway process as the store knows it: registered at start, kept alive by its heartbeat. */
export interface InstanceRecord {
  id: string
  host: string
  pid: number
  /** The pid's start time (clock ticks after boot) and boot id (Linux): a reused pid is another process. */
  startTicks?: number
  bootId?: string
  startedAt: number
  heartbeatAt: number
  /** Heartbeats so far: liveness is judged by it moving, never by the writer's time stamps. */
  beat?: number
  /** Where other instances reach it (cluster mode). */
  url?: string
  /** Device sessions it holds, as of its last heartbeat. */
  devices?: number
  /** A graceful stop handed its devices back: the others take them now, not at its departure (its other work stays its own until then). */
  leaving?: true
}

/** Who is alive as of the last registry read (heartbeat counters that move); silent or gone records are removed and told as departed (docs/scaling.md). */
export class InstanceView {
  /** Instances seen to leave (departed, or a gone process of this host): never alive again. */
  private readonly gone = new Set<string>()
  /** The live instances and their records as of the last read (this one's included): who is alive. */
  private known = new Map<string, InstanceRecord>()
  private readonly watch: HeartbeatWatch
  private reads = 0
  /** Ids the last read did not list, with the read count when asked: alive until a later read settles them. */
  private readonly asked = new Map<string, number>()
  private readonly listeners: ((gone: string[]) => void)[] = []
  private readonly leavingListeners: (() => void)[] = []
  /** Instances seen leaving (told once each). */
  private readonly leaving = new Set<string>()

  constructor(
    readonly id: string,
    private readonly records: Collection<InstanceRecord>,
    ttlMs: number,
    heartbeatMs: number,
    private readonly logger: Logger,
  ) {
    this.watch = new HeartbeatWatch(ttlMs, heartbeatMs)
  }

  isAlive(instanceId: string | undefined): boolean {
    if (instanceId === undefined) return false
    if (instanceId === this.id || this.known.has(instanceId)) return true
    if (this.gone.has(instanceId) || goneFromThisHost(instanceId)) return false
    // Not listed by the last read: it may have started since; alive until a later read settles it.
    if (!this.asked.has(instanceId)) putBounded(this.asked, instanceId, this.reads, 1000)
    return true
  }

  /** The live instances' records as of the last read (this one's included). */
  get liveRecords(): InstanceRecord[] {
    return [...this.known.values()]
  }

  /** A live instance's record: as of the last read, or read from the store when it is newer than that. */
  async recordOf(instanceId: string): Promise<InstanceRecord | undefined> {
    const known = this.known.get(instanceId)
    if (known) return known
    const record = await this.records.load(instanceId)
    if (record) this.known.set(instanceId, record)
    return record
  }

  /** Read `instanceId`'s record now: gone when there is none, its counter is the one watched unmoving for the time-to-live, or its process of this host is gone. */
  async confirmGone(instanceId: string): Promise<boolean> {
    if (instanceId === this.id) return false
    const record = await this.records.load(instanceId)
    return !record || this.watch.stillSilent(instanceId, beatOf(record)) || goneFromThisHost(instanceId)
  }

  /** Call `listener` with the instances that stopped heartbeating (or left), whenever some did. */
  onDeparture(listener: (gone: string[]) => void): void {
    this.listeners.push(listener)
  }

  /** Call `listener` whenever an instance is first seen leaving (a graceful stop handed its devices back). */
  onLeaving(listener: () => void): void {
    this.leavingListeners.push(listener)
  }

  markGone(id: string): void {
    this.gone.add(id)
    if (this.gone.size > 1000) this.gone.delete(this.gone.values().next().value!)
  }

  /** Read the live instances (`mine`: this one's record); drop silent records and those of gone processes of this host; tell who left. */
  async refresh(mine: InstanceRecord): Promise<void> {
    const started = ++this.reads
    const read: [string, InstanceRecord][] = []
    for await (const entry of this.records.all()) read.push(entry)
    const silent = new Set(this.watch.observe(new Map(read.filter(([id]) => id !== this.id).map(([id, record]) => [id, beatOf(record)]))))
    const known = new Map<string, InstanceRecord>([[this.id, mine]])
    for (const [id, record] of read) {
      if (id === this.id) continue
      const left = silent.has(id) || (record.host === mine.host && !processAlive(record))
      // A record not removed changed since the read: gone unless read again it has moved (a heartbeat landed meanwhile: alive).
      if (left && ((await this.records.removeIfEqual(id, record)) || (await this.confirmGone(id)))) this.markGone(id)
      else known.set(id, record)
    }
    const leaving = read.filter(([id, record]) => record.leaving && id !== this.id && !this.leaving.has(id)).map(([id]) => id)
    for (const id of leaving) this.leaving.add(id)
    if (this.leaving.size > 1000) this.leaving.delete(this.leaving.values().next().value!)
    if (leaving.length > 0) for (const listener of this.leavingListeners) listener()
    const gone = [...this.known.keys()].filter(id => !known.has(id))
    this.known = known
    for (const [id, askedAt] of [...this.asked]) {
      if (askedAt >= started) continue
      this.asked.delete(id)
      if (!known.has(id) && !this.gone.has(id)) gone.push(id)
    }
    for (const id of gone) this.markGone(id)
    if (gone.length > 0) {
      this.logger.info({ gone }, 'gateway instances gone: taking over their work')
      for (const listener of this.listeners) listener(gone)
    }
  }
}

/** A record's heartbeat counter (a record of an older version without one: its time stamp, which moves as well). */
function beatOf(record: InstanceRecord): number {
  return record.beat ?? record.heartbeatAt
}

/** Whether an id names a process of this host that is no longer running. */
function goneFromThisHost(instanceId: string): boolean {
  const parts = instanceId.split('-')
  if (parts.length < 4 || parts.slice(0, -3).join('-') !== hostTag()) return false
  const pid = Number(parts[parts.length - 3])
  return Number.isInteger(pid) && pid > 0 && !processAlive(pid)
}

/** This process's monotonic clock in ms (never jumps with the wall clock; not comparable across processes). */
export const monotonicNow = () => performance.now()

/** Judges instances alive by their heartbeat counters moving within `ttlMs` of this monotonic clock, watched without a gap (docs/scaling.md, "Claims and clocks"). */
export class HeartbeatWatch {
  /** Per instance, the counter value last read and when it was first read. */
  private readonly seen = new Map<string, { beat: number; since: number }>()
  private lastRead: number | undefined

  constructor(
    private readonly ttlMs: number,
    private readonly heartbeatMs: number,
    private readonly now = monotonicNow,
  ) {}

  /** One full read of the registry (`beats`: id to counter): the ids whose counter has not moved for `ttlMs`. */
  observe(beats: Map<string, number>): string[] {
    const now = this.now()
    const gap = this.lastRead === undefined || now - this.lastRead > Math.max(2 * this.heartbeatMs, this.ttlMs / 2)
    this.lastRead = now
    const silent: string[] = []
    for (const [id, beat] of beats) {
      const seen = this.seen.get(id)
      if (!seen || seen.beat !== beat) this.seen.set(id, { beat, since: now })
      else if (gap) seen.since = now
      else if (now - seen.since >= this.ttlMs) silent.push(id)
    }
    for (const id of [...this.seen.keys()]) if (!beats.has(id)) this.seen.delete(id)
    return silent
  }

  /** Whether a record just read with counter `beat` is still the one watched silent for `ttlMs`. */
  stillSilent(id: string, beat: number): boolean {
    const seen = this.seen.get(id)
    return seen !== undefined && seen.beat === beat && this.now() - seen.since >= this.ttlMs
  }
}
