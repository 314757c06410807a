import type { GatewayEvents } from '../../events.ts'
import type { Logger } from '../../logger.ts'
import type { Storage } from '../../ports/storage.ts'
import type { Transport } from '../../ports/transport.ts'
import { Collection } from '../../store/collection.ts'
import type { KeyedLock } from '../../store/keyed-lock.ts'
import type { Instances } from '../instances.ts'
import { claimedUntil, type Claim } from '../claims.ts'

/** Limits of the leases. */
interface LeaseSettings {
  /** Most device sessions this instance holds (unlimited when absent). */
  maxDevices?: number
  /** Cluster mode: a held device whose session was replaced (by an instance that lost the lease) is opened again. */
  clustered?: boolean
}

/**
 * Device leases (`device-lease:<deviceId>`, a Claim without expiry): a device's session is opened
 * only by the instance holding its lease, so two instances never open one device. A lease holds
 * while its instance is alive (its heartbeat renews them all at once); a take is a compare-and-set
 * that raises the fencing epoch. A lease is this instance's only while it stands (heartbeat not
 * late: a fenced instance closes its sessions before the others may take them); another's is taken
 * only once that instance is gone by the last heartbeat and by its record read after the lease.
 */
export class DeviceLeases {
  private readonly leases: Collection<Claim>
  /** Devices whose lease this instance holds, with the epoch it took them at. */
  private readonly held = new Map<string, number>()
  /** When this instance took each device it holds (a session just taken over is still opening). */
  private readonly takenAt = new Map<string, number>()
  /** Sessions being closed: a session opened again waits for its close (else the close would end the new one). */
  private readonly closing = new Map<string, Promise<void>>()

  constructor(
    storage: Storage,
    lock: KeyedLock,
    private readonly instances: Instances,
    private readonly transport: Transport,
    private readonly settings: LeaseSettings,
    private readonly logger: Logger,
    private readonly events?: GatewayEvents,
  ) {
    this.leases = new Collection(storage, lock, 'device-lease')
    instances.onFence(() => void this.letGoAll('heartbeat late'))
  }

  /** This instance's id. */
  get me(): string {
    return this.instances.id
  }

  /** Device sessions this instance holds. */
  get count(): number {
    return this.held.size
  }

  /** The devices this instance holds. */
  get devices(): string[] {
    return [...this.held.keys()]
  }

  /** Whether this instance holds the device's lease (no store read): never while it does not stand. */
  holds(deviceId: string): boolean {
    return this.held.has(deviceId) && this.instances.standing
  }

  /**
   * The live instance a new device should go to: the one holding the fewest device leases, counted
   * in the store now (one scan of the leases: linking is rare), this one when it is among them (no
   * forward for a tie), else the smallest id. Not the counts the heartbeats carry: those lag by up to
   * a heartbeat, and links made meanwhile all went to the instance whose count was stale (12 links
   * round-robin through 3 instances ended 10/1/1). Used when nobody holds a device being linked.
   */
  async leastLoaded(): Promise<string> {
    const loads = new Map(this.instances.liveRecords.map(record => [record.id, 0]))
    for await (const [, lease] of this.leases.all()) {
      const count = lease.owner ? loads.get(lease.owner) : undefined
      if (count !== undefined) loads.set(lease.owner!, count + 1)
    }
    // This instance's own count is what it holds (a lease of its own it let go counts for nobody).
    loads.set(this.me, this.held.size)
    const [best] = [...loads].sort(([a, la], [b, lb]) => la - lb || (a === this.me ? -1 : b === this.me ? 1 : a < b ? -1 : a > b ? 1 : 0))
    return best?.[0] ?? this.me
  }

  /** Whether this instance took the device over from another instance within `ms` (its session may still be opening: a handover). */
  takenWithin(deviceId: string, ms: number): boolean {
    const at = this.takenAt.get(deviceId)
    return at !== undefined && this.held.has(deviceId) && Date.now() - at < ms
  }

  /** Whether this instance may hold devices now (registered, heartbeat not late): a request for a device it does not hold waits (503) while it does not. */
  get standing(): boolean {
    return this.instances.standing
  }

  /** Whether this instance may take one more device. */
  get hasRoom(): boolean {
    return this.settings.maxDevices === undefined || this.held.size < this.settings.maxDevices
  }

  /**
   * The live instance holding the device's lease (this one included), or undefined when none does (a
   * lease naming this instance that it let go, after a late heartbeat, is held by none).
   */
  async holder(deviceId: string): Promise<string | undefined> {
    if (this.holds(deviceId)) return this.me
    const lease = await this.leases.load(deviceId)
    return claimedUntil(lease, this.instances, { ownYields: true }) !== undefined ? lease!.owner! : undefined
  }

  /** Whether the device's lease names this instance though it does not hold it (it let the device go at a fence): nobody else may take it while this instance lives. */
  async namesMe(deviceId: string): Promise<boolean> {
    return !this.held.has(deviceId) && (await this.leases.load(deviceId))?.owner === this.me
  }

  /**
   * Take the device's lease when nobody alive holds it (or this instance already does): true when
   * this instance holds it now. Of concurrent takers, in any number of processes, one wins.
   */
  async acquire(deviceId: string): Promise<boolean> {
    if (this.holds(deviceId)) return true
    if (!this.hasRoom || !this.instances.standing) return false
    const fences = this.instances.fenceCount
    const current = await this.leases.load(deviceId)
    const other = current?.owner && current.owner !== this.me ? current.owner : undefined
    if (other && (claimedUntil(current, this.instances) !== undefined || !(await this.instances.confirmGone(other)))) return false
    const next = { owner: this.me, epoch: (current?.epoch ?? 0) + 1 }
    if (!(await this.leases.replace(deviceId, current, next))) return false
    // A fence came while the lease was being taken: it names this instance, which holds nothing until
    // it stands again (then the balancer finds the lease its own and not held, and takes it again).
    if (this.instances.fenceCount !== fences || !this.instances.standing) return false
    this.held.set(deviceId, next.epoch)
    this.instances.setLoad(this.held.size)
    // A handover: the device's session lived on another instance (gone, or leaving: it handed the
    // lease back as `instance: null`), or here before a late heartbeat closed it, and opens here now.
    // A device never leased before is not one.
    if (current) this.takenAt.set(deviceId, Date.now())
    this.logger.debug({ deviceId, epoch: next.epoch, from: other }, 'device lease taken')
    this.events?.emit('lease', { deviceId, epoch: next.epoch, ...(other ? { from: other } : {}) })
    return true
  }

  /** Take the device's lease and open its session (resuming it with its stored credentials); false when another instance holds it. */
  async open(deviceId: string): Promise<boolean> {
    if (!(await this.acquire(deviceId))) return false
    const epoch = this.held.get(deviceId)
    await this.connect(deviceId, epoch).catch(err => this.logger.warn({ err, deviceId }, 'device resume failed'))
    // Let go meanwhile (a fence, a takeover seen by verify): the session opened after its close is closed again.
    if (this.held.get(deviceId) !== epoch) {
      await this.close(deviceId)
      return false
    }
    return true
  }

  /**
   * Reconcile what this instance holds with its sessions: a held device of `linked` whose session is
   * closed (closed by a fence and taken again, a resume that failed; in cluster mode also replaced by
   * an instance that lost the lease) is opened again; a
   * lease whose session cannot be opened is handed back for another instance to try. Run on every
   * heartbeat; devices checked one at a time.
   */
  async reconcile(linked: (deviceId: string) => Promise<boolean>): Promise<void> {
    for (const [deviceId, epoch] of [...this.held]) {
      if (!this.instances.standing) return
      const status = await this.transport.status(deviceId).catch(() => undefined)
      const reopen = status?.state === 'closed' || (status?.state === 'replaced' && this.settings.clustered)
      if (!reopen || !(await linked(deviceId))) continue
      // Still this instance's at that epoch (a replaced session may mean another instance took it).
      const lease = await this.leases.load(deviceId)
      if (this.held.get(deviceId) !== epoch) continue
      if (claimedUntil(lease, this.instances, { epoch }) === undefined) {
        await this.verify()
        continue
      }
      this.logger.warn({ deviceId, state: status!.state }, 'a held device had its session closed: opening it again')
      try {
        await this.connect(deviceId, epoch)
      } catch (err) {
        this.logger.warn({ err, deviceId }, 'a held device could not be opened: handing its lease back')
        await this.release(deviceId)
      }
    }
  }

  /** Close the device's session (without logging it out) and hand its lease back, so another instance may take it at once. */
  async release(deviceId: string): Promise<void> {
    const epoch = this.held.get(deviceId)
    if (epoch === undefined) return
    this.held.delete(deviceId)
    this.takenAt.delete(deviceId)
    this.instances.setLoad(this.held.size)
    await this.close(deviceId, err => this.logger.warn({ err, deviceId }, 'device session not closed'))
    await this.leases.replace(deviceId, { owner: this.me, epoch }, { owner: null, epoch })
  }

  /** Forget a deleted device's lease. */
  async forget(deviceId: string): Promise<void> {
    this.held.delete(deviceId)
    this.takenAt.delete(deviceId)
    this.instances.setLoad(this.held.size)
    await this.leases.remove(deviceId)
  }

  /** Hand back every lease (a graceful stop): the other instances take the devices at once. */
  async releaseAll(): Promise<void> {
    for (const deviceId of [...this.held.keys()]) await this.release(deviceId).catch(err => this.logger.warn({ err, deviceId }, 'device lease not handed back'))
  }

  /**
   * Check that every lease this instance believes it holds is still its own (after a pause, another
   * instance may have taken some over): those taken are let go, their sessions closed, never reopened.
   */
  async verify(): Promise<void> {
    for (const [deviceId, epoch] of [...this.held]) {
      const lease = await this.leases.load(deviceId)
      if (claimedUntil(lease, this.instances, { epoch }) !== undefined) continue
      this.logger.warn({ deviceId, holder: lease?.owner }, 'device lease taken over by another instance; closing its session here')
      this.held.delete(deviceId)
      await this.close(deviceId)
    }
    this.instances.setLoad(this.held.size)
  }

  // --- Internal helpers ---

  /** Close every session now (the heartbeat is late): the leases stay named this instance until verify() or a takeover. */
  private async letGoAll(why: string): Promise<void> {
    const devices = [...this.held.keys()]
    this.logger.warn({ count: devices.length, why }, 'closing every device session of this instance')
    this.held.clear()
    this.takenAt.clear()
    this.instances.setLoad(0)
    // All at once, each noted before any await: a device taken again meanwhile waits for its own close.
    await Promise.all(devices.map(deviceId => this.close(deviceId)))
  }

  /**
   * Open the device's session, once a close of it under way has ended, and only if this instance
   * still holds it at `epoch` and stands: a lease lost while that close ran opens nothing.
   */
  private async connect(deviceId: string, epoch: number | undefined): Promise<void> {
    await this.closing.get(deviceId)
    if (this.held.get(deviceId) !== epoch || !this.instances.standing) return
    await this.transport.connect(deviceId)
  }

  /** Close the device's session (errors to `onError`, else ignored), noted while under way. */
  private close(deviceId: string, onError: (err: unknown) => void = () => undefined): Promise<void> {
    const closing: Promise<void> = this.transport
      .disconnect(deviceId)
      .catch(onError)
      .finally(() => {
        if (this.closing.get(deviceId) === closing) this.closing.delete(deviceId)
      })
    this.closing.set(deviceId, closing)
    return closing
  }
}
