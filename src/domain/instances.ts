import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { Logger } from '../logger.ts'
import { supportsAtomic, type Storage } from '../ports/storage.ts'
import { Collection } from '../store/collection.ts'
import type { KeyedLock } from '../store/keyed-lock.ts'

/** A gateway process as the store knows it: registered at start, kept alive by its heartbeat. */
export interface InstanceRecord {
  id: string
  host: string
  pid: number
  startedAt: number
  heartbeatAt: number
  /** Where other instances reach it (cluster mode). */
  url?: string
}

/** Timing of the instance registry. */
export interface InstanceSettings {
  /** How often an instance renews its record (and reads who else is alive). */
  heartbeatMs: number
  /** An instance whose record was not renewed for this long is gone: its claims pass to the others. */
  ttlMs: number
}

/** What a departure callback is told: the instances that stopped heartbeating (or left). */
export type DepartureListener = (gone: string[]) => void

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
  readonly id = `${safe(hostname())}-${process.pid}-${randomBytes(4).toString('hex')}`
  private readonly records: Collection<InstanceRecord>
  private record: InstanceRecord
  private alive = new Set<string>()
  private timer: NodeJS.Timeout | undefined
  private readonly listeners: DepartureListener[] = []
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
    this.record = { id: this.id, host: hostname(), pid: process.pid, startedAt: now, heartbeatAt: now, ...(url ? { url } : {}) }
    this.alive.add(this.id)
  }

  /**
   * Register this process, clear the records of gone processes of this host, learn who is alive and
   * start the heartbeat. Throws when another instance is alive and the store cannot do the atomic
   * steps that keep shared work exactly-once (several processes on such a store would duplicate it).
   */
  async start(): Promise<void> {
    await this.records.put(this.id, this.record, this.settings.ttlMs)
    await this.refresh()
    const others = [...this.alive].filter(id => id !== this.id)
    if (others.length > 0 && !supportsAtomic(this.storage)) {
      await this.records.remove(this.id)
      throw new Error(
        `Another gateway instance (${others[0]}) uses this store, and the store cannot do the atomic steps (add, compareAndSet, deleteIfEqual, increment) several processes need: use Redis or PostgreSQL, or run one process`,
      )
    }
    this.timer = setInterval(() => void this.beat(), this.settings.heartbeatMs)
    this.timer.unref()
  }

  /** Whether the instance named by a claim is alive, as of the last heartbeat (this one always is). */
  isAlive(instanceId: string | undefined): boolean {
    return instanceId !== undefined && this.alive.has(instanceId)
  }

  /** The live instances, as of the last heartbeat. */
  get live(): string[] {
    return [...this.alive]
  }

  /** The live instances' records, read from the store now. */
  async list(): Promise<InstanceRecord[]> {
    const found: InstanceRecord[] = []
    for await (const [, record] of this.records.all()) found.push(record)
    return found
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
    const next = { ...this.record, heartbeatAt: Date.now() }
    try {
      if (!(await this.records.replace(this.id, this.record, next, this.settings.ttlMs))) {
        this.logger.warn({ instanceId: this.id }, 'this instance was taken for gone (no heartbeat for too long); registering again')
        await this.records.put(this.id, next, this.settings.ttlMs)
      }
      this.record = next
      await this.refresh()
    } catch (err) {
      this.logger.warn({ err }, 'instance heartbeat failed')
    }
  }

  /** Read the live instances; drop the records of gone processes of this host; tell listeners who left. */
  private async refresh(): Promise<void> {
    const now = new Set<string>([this.id])
    for await (const [id, record] of this.records.all()) {
      if (id !== this.id && record.host === this.record.host && !processAlive(record.pid)) {
        await this.records.removeIfEqual(id, record)
        continue
      }
      now.add(id)
    }
    const gone = [...this.alive].filter(id => !now.has(id))
    this.alive = now
    if (gone.length > 0) {
      this.logger.info({ gone }, 'gateway instances gone: taking over their work')
      for (const listener of this.listeners) listener(gone)
    }
  }
}

// --- Internal helpers ---

function safe(text: string): string {
  return text.replace(/[^A-Za-z0-9.]/g, '_')
}

function processAlive(pid: number): boolean {
  if (pid === process.pid) return true
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}
