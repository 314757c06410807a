import PQueue from 'p-queue'
import type { Logger } from '../../logger.ts'
import type { Devices } from '../devices.ts'
import type { Instances } from '../instances.ts'
import type { DeviceLeases } from './device-leases.ts'

/** Devices opened at once when many are taken (at start, after an instance is gone). */
const CONCURRENCY = 16

/** How often every instance looks for linked devices nobody holds, besides departures. */
const SCAN_EVERY_MS = 30_000

/**
 * Puts every linked device in the hands of one live instance: at start, on a departure and every 30 s, each instance
 * shares the devices nobody alive holds over the live ones, least loaded first, and takes its share (anyone's, once overdue).
 */
export class DeviceBalancer {
  /** Devices seen without a holder, with when: taken by anyone once they stay so for two heartbeats. */
  private readonly orphanSince = new Map<string, number>()
  private scanning: Promise<void> | undefined
  private again = false
  private lastScan = 0
  /** A scan is due at the next heartbeat (this instance let its sessions go, or re-registered). */
  private pending = false
  private stopped = false
  private reconciling: Promise<void> | undefined

  constructor(
    private readonly leases: DeviceLeases,
    private readonly instances: Instances,
    private readonly devices: Devices,
    private readonly heartbeatMs: number,
    private readonly logger: Logger,
  ) {
    instances.view.onDeparture(() => void this.scan())
    instances.events.on('fence', () => void (this.pending = true))
    instances.events.on('rejoin', () => void (this.pending = true))
    instances.events.on('beat', () => {
      if (this.pending || this.orphanSince.size > 0 || Date.now() - this.lastScan >= SCAN_EVERY_MS) void this.scan()
      void this.reconcile()
    })
  }

  /** Take this instance's share of the devices nobody holds (resolves once they are opened). */
  start(): Promise<void> {
    return this.scan()
  }

  stop(): void {
    this.stopped = true
  }

  /** Every heartbeat: the devices this instance holds have their sessions open (one pass at a time). */
  private reconcile(): Promise<void> {
    if (this.reconciling || this.stopped) return this.reconciling ?? Promise.resolve()
    this.reconciling = this.leases
      .reconcile(async deviceId => (await this.devices.get(deviceId))?.linked === true)
      .catch(err => this.logger.warn({ err }, 'reconciling held devices with their sessions failed; trying again at the next heartbeat'))
      .finally(() => (this.reconciling = undefined))
    return this.reconciling
  }

  private scan(): Promise<void> {
    if (this.scanning) {
      this.again = true
      return this.scanning
    }
    this.scanning = (async () => {
      try {
        do {
          this.again = false
          this.lastScan = Date.now()
          this.pending = false
          await this.leases.verify()
          await this.takeShare(await this.orphans())
        } while (this.again && !this.stopped)
      } catch (err) {
        this.logger.warn({ err }, 'looking for devices nobody holds failed; trying again at the next heartbeat')
      } finally {
        this.scanning = undefined
      }
    })()
    return this.scanning
  }

  /** Linked devices whose lease no live instance holds, oldest id first. */
  private async orphans(): Promise<string[]> {
    const found: string[] = []
    for await (const device of this.devices.all()) {
      if (!device.linked || this.leases.holds(device.id)) continue
      if ((await this.leases.holder(device.id)) === undefined) found.push(device.id)
    }
    const now = Date.now()
    for (const id of [...this.orphanSince.keys()]) if (!found.includes(id)) this.orphanSince.delete(id)
    for (const id of found) if (!this.orphanSince.has(id)) this.orphanSince.set(id, now)
    return found.sort()
  }

  /** Share the orphans out, least loaded instance first; open this instance's share (and any orphan left over for two heartbeats). */
  private async takeShare(orphans: string[]): Promise<void> {
    const loads = new Map(this.instances.view.liveRecords.map(record => [record.id, record.id === this.leases.me ? this.leases.count : (record.devices ?? 0)]))
    const overdue = Date.now() - 2 * this.heartbeatMs
    const mine: string[] = []
    for (const deviceId of orphans) {
      if (await this.leases.namesMe(deviceId)) {
        mine.push(deviceId)
        loads.set(this.leases.me, (loads.get(this.leases.me) ?? 0) + 1)
        continue
      }
      const [assignee] = [...loads].sort(([a, la], [b, lb]) => la - lb || a.localeCompare(b))
      if (!assignee) break
      loads.set(assignee[0], assignee[1] + 1)
      if (assignee[0] === this.leases.me || this.orphanSince.get(deviceId)! <= overdue) mine.push(deviceId)
    }
    const opening = new PQueue({ concurrency: CONCURRENCY })
    await opening.addAll(
      mine.map(deviceId => async () => {
        if (!this.stopped && this.leases.hasRoom && (await this.leases.open(deviceId))) this.orphanSince.delete(deviceId)
      }),
    )
    if (mine.length > 0) this.logger.info({ count: mine.length, holding: this.leases.count }, 'devices taken')
  }
}
