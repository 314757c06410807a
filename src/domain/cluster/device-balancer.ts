import PQueue from 'p-queue'
import type { Logger } from '../../logger.ts'
import type { Device, Devices } from '../devices.ts'
import type { Instances } from '../instances.ts'
import type { DeviceLeases } from './device-leases.ts'

/** Devices opened at once when many are taken (at start, after an instance is gone). */
const CONCURRENCY = 16

/** How often every instance looks for linked devices nobody holds, besides departures. */
const SCAN_EVERY_MS = 30_000

/** Shares the linked devices nobody alive holds over the live instances, least loaded first, at start, on a departure and every 30 s (docs/scaling.md). */
export function deviceBalancer(leases: DeviceLeases, instances: Instances, devices: Devices, heartbeatMs: number, logger: Logger) {
  /** Devices seen without a holder, with when: taken by anyone once they stay so for two heartbeats. */
  const orphanSince = new Map<string, number>()
  let scanning: Promise<void> | undefined
  let again = false
  let lastScan = 0
  /** A scan is due at the next heartbeat (this instance let its sessions go, or re-registered). */
  let pending = false
  let stopped = false
  let reconciling: Promise<void> | undefined

  /** Every heartbeat: the devices this instance holds have their sessions open (one pass at a time). */
  const reconcile = (): Promise<void> => {
    if (reconciling || stopped) return reconciling ?? Promise.resolve()
    reconciling = leases
      .reconcile(async deviceId => isLive(await devices.get(deviceId)))
      .catch(err => logger.warn({ err }, 'reconciling held devices with their sessions failed; trying again at the next heartbeat'))
      .finally(() => (reconciling = undefined))
    return reconciling
  }

  const scan = (): Promise<void> => {
    if (scanning) {
      again = true
      return scanning
    }
    scanning = (async () => {
      try {
        do {
          again = false
          lastScan = Date.now()
          pending = false
          await leases.verify()
          await takeShare(await orphans())
        } while (again && !stopped)
      } catch (err) {
        pending = true
        logger.warn({ err }, 'looking for devices nobody holds failed; trying again at the next heartbeat')
      } finally {
        scanning = undefined
      }
    })()
    return scanning
  }

  /** Linked devices whose lease no live instance holds, oldest id first. */
  const orphans = async (): Promise<string[]> => {
    const found: string[] = []
    for await (const device of devices.all()) {
      if (!isLive(device) || leases.holds(device.id)) continue
      if ((await leases.holder(device.id)) === undefined) found.push(device.id)
    }
    const now = Date.now()
    for (const id of [...orphanSince.keys()]) if (!found.includes(id)) orphanSince.delete(id)
    for (const id of found) if (!orphanSince.has(id)) orphanSince.set(id, now)
    return found.sort()
  }

  /** Share the orphans out, least loaded staying instance first; open this instance's share (and any orphan left over for two heartbeats). */
  const takeShare = async (orphans: string[]): Promise<void> => {
    // Never to an instance leaving (it handed its devices back): the others would wait two heartbeats before taking its share.
    const loads = new Map(
      instances.view.liveRecords.filter(record => !record.leaving).map(record => [record.id, record.id === leases.me ? leases.count : (record.devices ?? 0)]),
    )
    const overdue = Date.now() - 2 * heartbeatMs
    const mine: string[] = []
    for (const deviceId of orphans) {
      if (await leases.namesMe(deviceId)) {
        mine.push(deviceId)
        loads.set(leases.me, (loads.get(leases.me) ?? 0) + 1)
        continue
      }
      const [assignee] = [...loads].sort(([a, la], [b, lb]) => la - lb || a.localeCompare(b))
      if (!assignee) break
      loads.set(assignee[0], assignee[1] + 1)
      if (assignee[0] === leases.me || orphanSince.get(deviceId)! <= overdue) mine.push(deviceId)
    }
    const opening = new PQueue({ concurrency: CONCURRENCY })
    await opening.addAll(
      mine.map(deviceId => async () => {
        if (!stopped && leases.hasRoom && (await leases.open(deviceId))) orphanSince.delete(deviceId)
      }),
    )
    if (mine.length > 0) logger.info({ count: mine.length, holding: leases.count }, 'devices taken')
  }

  instances.view.onDeparture(() => void scan())
  instances.view.onLeaving(() => void scan()) // a graceful stop handed its devices back
  instances.events.on('fence', () => void (pending = true))
  instances.events.on('rejoin', () => void (pending = true))
  instances.events.on('beat', () => {
    if (pending || orphanSince.size > 0 || Date.now() - lastScan >= SCAN_EVERY_MS) void scan()
    void reconcile()
  })
  return { start: scan, stop: () => ((stopped = true), scanning) }
}

/** A device whose session is kept open: linked, and not being deleted (a deletion cut short is never opened again). */
function isLive(device: Device | undefined): boolean {
  return device?.linked === true && !device.removing
}
