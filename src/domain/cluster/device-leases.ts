import type { GatewayEvents } from '../../events.ts'
import type { Logger } from '../../logger.ts'
import type { Storage } from '../../ports/storage.ts'
import type { Transport } from '../../ports/transport.ts'
import { Collection } from '../../store/collection.ts'
import type { KeyedLock } from '../../store/keyed-lock.ts'
import { fenceMark, unfencedSince, type Instances } from '../instances.ts'
import { claimedUntil, type Claim } from '../claims.ts'

/** Device leases (`device-lease:<deviceId>`, a Claim with a fencing epoch): only the holder opens a session (docs/scaling.md, "Claims and clocks"). */
export class DeviceLeases {
  private readonly leases: Collection<Claim>
  /** Devices whose lease this instance holds: the epoch it took them at, and when, for a handover. */
  private readonly held = new Map<string, { epoch: number; takenAt?: number }>()
  /** Sessions being closed: a session opened again waits for its close. */
  private readonly closing = new Map<string, Promise<void>>()
  /** Held devices whose session was replaced and reopened: how often in a row, heartbeats still to skip, heartbeats seen open since. */
  private readonly replacedBackoff = new Map<string, { tries: number; skip: number; openBeats: number }>()

  constructor(
    storage: Storage,
    lock: KeyedLock,
    private readonly instances: Instances,
    private readonly transport: Transport,
    /** `maxDevices`: most sessions held here (absent: no limit); `clustered`: a held device whose session was replaced (by an instance that lost the lease) is opened again. */
    private readonly settings: { maxDevices?: number; clustered?: boolean },
    private readonly logger: Logger,
    private readonly events?: GatewayEvents,
  ) {
    this.leases = new Collection(storage, lock, 'device-lease')
    instances.events.on('fence', () => void this.letGoAll('heartbeat late'))
  }

  get me(): string {
    return this.instances.id
  }

  get count(): number {
    return this.held.size
  }

  get devices(): string[] {
    return [...this.held.keys()]
  }

  /** Whether this instance holds the device's lease (no store read): never while it does not stand. */
  holds(deviceId: string): boolean {
    return this.held.has(deviceId) && this.instances.standing
  }

  /** The live instance a new device goes to (never one leaving): the fewest leases counted in the store now (heartbeat counts lag), this one on a tie, else the smallest id. */
  async leastLoaded(): Promise<string> {
    const loads = new Map(this.instances.view.liveRecords.filter(record => !record.leaving).map(record => [record.id, 0]))
    for await (const [, lease] of this.leases.all()) {
      const count = lease.owner ? loads.get(lease.owner) : undefined
      if (count !== undefined) loads.set(lease.owner!, count + 1)
    }
    loads.set(this.me, this.held.size)
    const [best] = [...loads].sort(([a, la], [b, lb]) => la - lb || (a === this.me ? -1 : b === this.me ? 1 : a < b ? -1 : a > b ? 1 : 0))
    return best?.[0] ?? this.me
  }

  /** The epoch this instance holds the device's lease at (undefined: not held); a let-go and re-take changes it. */
  epochOf(deviceId: string): number | undefined {
    return this.holds(deviceId) ? this.held.get(deviceId)!.epoch : undefined
  }

  /** Whether this instance took the device over within `ms` (its session may still be opening). */
  takenWithin(deviceId: string, ms: number): boolean {
    const at = this.held.get(deviceId)?.takenAt
    return at !== undefined && Date.now() - at < ms
  }

  get standing(): boolean {
    return this.instances.standing
  }

  get hasRoom(): boolean {
    return this.settings.maxDevices === undefined || this.held.size < this.settings.maxDevices
  }

  /** The live instance holding the device's lease (this one included), or undefined when none does. */
  async holder(deviceId: string): Promise<string | undefined> {
    if (this.holds(deviceId)) return this.me
    const lease = await this.leases.load(deviceId)
    return claimedUntil(lease, this.instances.view, { ownYields: true }) !== undefined ? lease!.owner! : undefined
  }

  /** Whether the device's lease names this instance though it let the device go (at a fence). */
  async namesMe(deviceId: string): Promise<boolean> {
    return !this.held.has(deviceId) && (await this.leases.load(deviceId))?.owner === this.me
  }

  /** Take the device's lease when nobody alive holds it: true when this instance holds it now (of concurrent takers, one wins); `evenWhenFull`: also past `maxDevices` (a deletion's brief hold, which opens no session). */
  async acquire(deviceId: string, { evenWhenFull = false } = {}): Promise<boolean> {
    if (this.holds(deviceId)) return true
    // Nothing is taken while fenced (back from a pause, not yet registered again: a lease written then could land first and be
    // taken for a gone instance's); the mark is read before the lease is written, as for every claim on shared work.
    if ((!this.hasRoom && !evenWhenFull) || !this.instances.standing) return false
    const mark = fenceMark(this.instances)
    const current = await this.leases.load(deviceId)
    const other = current?.owner && current.owner !== this.me ? current.owner : undefined
    // Taken over from the instance holding it (gone), or from the one that handed it back (a graceful stop): the `lease` event's `from`.
    const from = other ?? (current?.handedBackBy !== this.me ? current?.handedBackBy : undefined)
    if (other && (claimedUntil(current, this.instances.view) !== undefined || !(await this.instances.view.confirmGone(other)))) return false
    const next = { owner: this.me, epoch: (current?.epoch ?? 0) + 1 }
    if (!(await this.leases.replace(deviceId, current, next))) return false
    // A fence came meanwhile (raised, even if lifted since), or a stop: the lease names this instance, which holds nothing until it stands again.
    if (!unfencedSince(this.instances, mark) || !this.instances.standing) return false
    // A handover (a device leased before) notes when: its session lived elsewhere, or here before a fence.
    this.held.set(deviceId, { epoch: next.epoch, ...(current ? { takenAt: Date.now() } : {}) })
    this.instances.setLoad(this.held.size)
    this.logger.debug({ deviceId, epoch: next.epoch, from }, 'device lease taken')
    this.events?.emit('lease', { deviceId, epoch: next.epoch, ...(from ? { from } : {}) })
    return true
  }

  /** Take the device's lease and open its session; false when another instance holds it, or when its session did not open (the lease is handed back). */
  async open(deviceId: string): Promise<boolean> {
    if (!(await this.acquire(deviceId))) return false
    const epoch = this.held.get(deviceId)?.epoch
    const opened = await this.connect(deviceId, epoch).then(
      () => true,
      err => (this.logger.warn({ err, deviceId }, 'a device session could not be opened: handing its lease back'), false),
    )
    if (this.held.get(deviceId)?.epoch === epoch) {
      if (opened) return true
      // Not kept as if open here: a request would run on a session this process never opened (a deletion's logout could not unlink it).
      await this.release(deviceId)
      return false
    }
    // Let go while it opened: its session is closed, unless taken again since (then it is the newer take's).
    if (!this.held.has(deviceId)) await this.close(deviceId)
    return false
  }

  /**
   * Every heartbeat: a held, `linked` device whose session is closed (not by the network's refusal of the account) or replaced (clustered)
   * is opened again, or its lease handed back. A replaced one is reopened at once the first time (an instance that lost the lease let go),
   * then with back-off in heartbeats (1, 3, 7, ... up to 63 skipped): a client outside the cluster with the same credentials is not fought at every heartbeat.
   */
  async reconcile(linked: (deviceId: string) => Promise<boolean>): Promise<void> {
    for (const [deviceId, { epoch }] of [...this.held]) {
      if (!this.instances.standing) return
      const status = await this.transport.status(deviceId).catch(() => undefined)
      if (!this.backOffReplaced(deviceId, status?.state)) continue
      const reopen = (status?.state === 'closed' && !status.refused) || (status?.state === 'replaced' && this.settings.clustered)
      if (!reopen || !(await linked(deviceId))) continue
      const lease = await this.leases.load(deviceId)
      if (this.held.get(deviceId)?.epoch !== epoch) continue
      if (claimedUntil(lease, this.instances.view, { epoch }) === undefined) {
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

  /** Close the device's session (no logout) and hand its lease back for another instance to take at once. */
  async release(deviceId: string): Promise<void> {
    const epoch = this.held.get(deviceId)?.epoch
    if (epoch === undefined) return
    this.drop(deviceId)
    await this.close(deviceId, err => this.logger.warn({ err, deviceId }, 'device session not closed'))
    await this.leases.replace(deviceId, { owner: this.me, epoch }, { owner: null, epoch, handedBackBy: this.me })
  }

  /** Forget a deleted device's lease. */
  async forget(deviceId: string): Promise<void> {
    this.drop(deviceId)
    await this.leases.remove(deviceId)
  }

  /** Hand back every lease (a graceful stop): the other instances take the devices at once. */
  async releaseAll(): Promise<void> {
    for (const deviceId of [...this.held.keys()]) await this.release(deviceId).catch(err => this.logger.warn({ err, deviceId }, 'device lease not handed back'))
  }

  /** Check that every lease held is still this instance's at its epoch; those taken over are let go, their sessions closed. */
  async verify(): Promise<void> {
    for (const [deviceId, { epoch }] of [...this.held]) {
      const lease = await this.leases.load(deviceId)
      if (claimedUntil(lease, this.instances.view, { epoch }) !== undefined || this.held.get(deviceId)?.epoch !== epoch) continue // or let go and taken again meanwhile
      this.logger.warn({ deviceId, holder: lease?.owner }, 'device lease taken over by another instance; closing its session here')
      this.held.delete(deviceId)
      this.replacedBackoff.delete(deviceId)
      await this.close(deviceId)
    }
    this.instances.setLoad(this.held.size)
  }

  /** Whether a heartbeat may reopen the device now (false: a replaced session's back-off skips this one); keeps the back-off's count. */
  private backOffReplaced(deviceId: string, state: string | undefined): boolean {
    const backoff = this.replacedBackoff.get(deviceId)
    if (state === 'open') {
      // Open for as long as the last wait (at least 20 heartbeats): the fight is over.
      if (backoff && ++backoff.openBeats > Math.max(20, 2 ** backoff.tries)) this.replacedBackoff.delete(deviceId)
      return true
    }
    if (state !== 'replaced' || !this.settings.clustered) return true
    if (backoff && backoff.skip > 0) {
      backoff.skip--
      return false
    }
    const tries = (backoff?.tries ?? 0) + 1
    this.replacedBackoff.set(deviceId, { tries, skip: Math.min(2 ** tries - 1, 63), openBeats: 0 })
    return true
  }

  private drop(deviceId: string): void {
    this.held.delete(deviceId)
    this.replacedBackoff.delete(deviceId)
    this.instances.setLoad(this.held.size)
  }

  /** Close every session now (the heartbeat is late); the leases stay named this instance. */
  private async letGoAll(why: string): Promise<void> {
    const devices = [...this.held.keys()]
    this.logger.warn({ count: devices.length, why }, 'closing every device session of this instance')
    this.held.clear()
    this.replacedBackoff.clear()
    this.instances.setLoad(0)
    await Promise.all(devices.map(deviceId => this.close(deviceId)))
  }

  /** Open the device's session once a close under way has ended, only if still held at `epoch` and standing. */
  private async connect(deviceId: string, epoch: number | undefined): Promise<void> {
    await this.closing.get(deviceId)
    if (this.held.get(deviceId)?.epoch !== epoch || !this.instances.standing) return
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
