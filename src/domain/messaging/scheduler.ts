import { GatewayError, type ErrorCode } from '../../errors.ts'
import type { Logger } from '../../logger.ts'
import { TransportError } from '../../ports/transport.ts'
import type { Device, Devices } from '../devices.ts'
import type { Liveness } from '../instances.ts'
import { decodeAction, describeAction, encodeAction, type Action } from './actions.ts'
import type { Messenger } from './messenger.ts'
import { claimHolds, type ScheduleItem, type ScheduleStore } from './schedule-store.ts'
import type { ScheduleTime } from './schedule-time.ts'

/** Timing of the scheduler. */
interface SchedulerOptions {
  /** Delays before each retry of a failed send; after the last, the item is marked failed. */
  retryMs: number[]
  /** Longest sleep between two scans of the store. */
  pollMs: number
  /** How long a claim holds an item (longer than any send can take). */
  leaseMs: number
  /** How long a due item waits for its device to be connected before it is marked failed. */
  maxWaitMs: number
}

/** Devices whose due items are being sent at once (each device's items go one after the other). */
const MAX_DEVICES_IN_FLIGHT = 100

/** When a send that never started (it waited too long in the device's queue) is tried again. */
const REQUEUE_MS = 1_000

/**
 * Sends scheduled items when due. Items live in Storage (ScheduleStore), so nothing is lost across
 * a restart: on start, and every `pollMs`, the store is scanned; one timer wakes the scheduler at the
 * next due time. A device's due items are sent one after the other (each claimed just before it is
 * sent), so they never pile up in the device's send queue: a paced device sends its backlog at its
 * pace, and time spent waiting behind other sends is never counted as an attempt. Items of a device
 * that is not connected here wait for it (up to `maxWaitMs`) without spending their retries; a
 * device that connects is served at once. Failures are retried with back-off, then marked failed.
 */
export class Scheduler {
  private timer?: NodeJS.Timeout
  private wakeAt = Infinity
  private started = false
  private stopped = false
  private ticking?: Promise<void>
  private again = false
  private readonly eager = new Set<string>()
  /** The devices whose items are being sent, with what they have left to send. */
  private readonly lanes = new Map<string, { items: ScheduleItem[]; run: Promise<void> }>()
  /** Devices not connected here, with when the first of their due items runs out of waiting. */
  private readonly away = new Map<string, number>()

  constructor(
    private readonly store: ScheduleStore,
    private readonly messenger: Messenger,
    private readonly devices: Devices,
    private readonly liveness: Liveness,
    private readonly options: SchedulerOptions,
    private readonly logger: Logger,
  ) {}

  /** Store `action` to be done at `time`; answers the stored item. */
  async schedule(device: Device, action: Action, time: ScheduleTime): Promise<ScheduleItem> {
    const item = await this.store.add(
      { accountId: device.accountId, deviceId: device.id, to: action.to, summary: describeAction(action), dueAt: time.at, agendamento: time.text },
      encodeAction(action),
    )
    if (this.started && !this.stopped) {
      if (this.ticking) this.again = true
      else if (item.dueAt < this.wakeAt) this.arm(item.dueAt)
    }
    return item
  }

  /** The device's pending and failed items, earliest first. */
  list(device: Device): Promise<ScheduleItem[]> {
    return this.store.forDevice(device.id)
  }

  /** How many stored items are pending, failed, and pending and already due (a scan, for metrics). */
  async backlog(now = Date.now()): Promise<{ pending: number; failed: number; due: number }> {
    const counts = { pending: 0, failed: 0, due: 0 }
    for await (const item of this.store.all()) {
      if (item.state === 'failed') counts.failed++
      else {
        counts.pending++
        if (Math.max(item.dueAt, item.retryAt ?? 0) <= now) counts.due++
      }
    }
    return counts
  }

  /** Start sending (call once the stored devices have been resumed). */
  start(): void {
    if (this.started || this.stopped) return
    this.started = true
    this.wake()
  }

  /** Scan now; with a device id (it just connected), that device's items waiting for a retry go at once. */
  wake(deviceId?: string): void {
    if (!this.started || this.stopped) return
    if (deviceId) {
      this.eager.add(deviceId)
      this.away.delete(deviceId)
    }
    void this.tick()
  }

  /** Forget the items of a deleted device. */
  async removeDevice(device: Device): Promise<void> {
    await this.store.removeDevice(device.id)
  }

  /** Stop the timer and wait for the sends under way. */
  async close(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    await this.ticking
    await Promise.all([...this.lanes.values()].map(lane => lane.run))
  }

  // --- Internal helpers ---

  private tick(): Promise<void> {
    if (this.ticking) {
      this.again = true
      return this.ticking
    }
    this.ticking = (async () => {
      try {
        do {
          this.again = false
          await this.scan()
        } while (this.again && !this.stopped)
      } catch (err) {
        this.logger.error({ err }, 'schedule scan failed')
        this.arm(Date.now() + this.options.pollMs)
      } finally {
        this.ticking = undefined
      }
    })()
    return this.ticking
  }

  /** Find the due items, by device, and give each device without a running lane one; arm for the next due time. */
  private async scan(): Promise<void> {
    const now = Date.now()
    const eager = new Set(this.eager)
    this.eager.clear()
    let next = now + this.options.pollMs
    const due = new Map<string, ScheduleItem[]>()
    for await (const item of this.store.all()) {
      if (this.stopped) return
      if (item.state !== 'pending' || this.lanes.has(item.deviceId)) continue
      const waitsUntil = this.away.get(item.deviceId)
      if (waitsUntil !== undefined && waitsUntil > now) {
        next = Math.min(next, waitsUntil)
        continue
      }
      if (claimHolds(item, this.liveness, now)) {
        next = Math.min(next, item.claim!.until)
        continue
      }
      const readyAt = eager.has(item.deviceId) ? item.dueAt : Math.max(item.dueAt, item.retryAt ?? 0)
      if (readyAt > now) next = Math.min(next, readyAt)
      else due.set(item.deviceId, [...(due.get(item.deviceId) ?? []), item])
    }
    for (const [deviceId, items] of due) {
      if (this.lanes.size >= MAX_DEVICES_IN_FLIGHT) break
      items.sort((a, b) => a.dueAt - b.dueAt || a.createdAt - b.createdAt)
      this.openLane(deviceId, items)
    }
    this.arm(next)
  }

  private arm(at: number): void {
    if (this.stopped) return
    clearTimeout(this.timer)
    this.wakeAt = at
    this.timer = setTimeout(() => void this.tick(), Math.max(0, Math.min(at - Date.now(), this.options.pollMs)))
    this.timer.unref()
  }

  /** Send a device's due items one after the other; when done, scan again (more may be due). */
  private openLane(deviceId: string, items: ScheduleItem[]): void {
    const lane = { items, run: Promise.resolve() }
    lane.run = (async () => {
      for (let item = lane.items.shift(); item && !this.stopped; item = lane.items.shift()) {
        const outcome = await this.send(item).catch(err => {
          this.logger.error({ err, scheduleId: item!.id }, 'scheduled send not recorded')
          return 'sent' as const
        })
        if (outcome === 'device-away') {
          // The device is not connected here: its items wait for it (a connection wakes them).
          this.away.set(deviceId, Math.min(item.dueAt, ...lane.items.map(left => left.dueAt)) + this.options.maxWaitMs)
          break
        }
      }
    })().finally(() => {
      this.lanes.delete(deviceId)
      if (!this.stopped) void this.tick()
    })
    this.lanes.set(deviceId, lane)
  }

  /** One item: claim it, send it through the device's queue, then record the outcome. */
  private async send(item: ScheduleItem): Promise<'sent' | 'device-away'> {
    const device = await this.devices.get(item.deviceId)
    const away = device !== undefined && !(await this.devices.status(device)).connected
    if (away && Date.now() < item.dueAt + this.options.maxWaitMs) return 'device-away'
    const claimed = await this.store.claim(item, this.options.leaseMs, this.liveness)
    if (!claimed) return 'sent'
    if (away) {
      await this.store.fail(claimed, `the device was not connected within ${Math.round(this.options.maxWaitMs / 1000)} s of the due time`, undefined)
      return 'sent'
    }
    const body = await this.store.body(claimed)
    if (!device || !body) {
      await this.store.fail(claimed, device ? 'action missing' : 'device deleted', undefined)
      return 'sent'
    }
    try {
      const id = await this.messenger.perform(device, decodeAction(body))
      await this.store.complete(claimed)
      this.logger.info({ scheduleId: claimed.id, deviceId: device.id, messageId: id }, 'scheduled message sent')
    } catch (err) {
      if (neverStarted(err)) {
        // Waiting (shutdown, a full or slow queue, the device gone away meanwhile) is never an attempt.
        await this.store.release(claimed)
        if (!this.stopped) this.arm(Math.min(this.wakeAt, Date.now() + REQUEUE_MS))
        return hasCode(err, 'not-connected') ? 'device-away' : 'sent'
      }
      const delay = isPermanent(err) ? undefined : this.options.retryMs[claimed.attempts]
      const retryAt = delay === undefined ? undefined : Date.now() + delay
      await this.store.fail(claimed, describe(err), retryAt)
      if (retryAt !== undefined) this.arm(Math.min(this.wakeAt, retryAt))
      this.logger.warn({ err, scheduleId: claimed.id, deviceId: device.id, retryAt }, retryAt ? 'scheduled send failed, will retry' : 'scheduled send failed')
    }
    return 'sent'
  }
}

// --- Internal helpers ---

/** Refusals that mean the send never started: not an attempt. */
function neverStarted(err: unknown): boolean {
  if (err instanceof TransportError) return err.code === 'not-connected'
  return err instanceof GatewayError && ['shutting-down', 'send-queue-full', 'send-queue-timeout', 'not-connected'].includes(err.code)
}

function hasCode(err: unknown, code: ErrorCode): boolean {
  return (err instanceof GatewayError || err instanceof TransportError) && err.code === code
}

/** Failures a retry cannot fix: the network refused the content or the target. */
function isPermanent(err: unknown): boolean {
  if (err instanceof TransportError) return err.code === 'invalid' || err.code === 'not-found' || err.code === 'not-admin'
  if (err instanceof GatewayError) return PERMANENT.has(err.code)
  return false
}

/** The refusals of the gateway itself that a retry cannot fix. */
const PERMANENT = new Set<ErrorCode>([
  'invalid-input',
  'device-not-found',
  'message-not-found',
  'group-not-found',
  'invite-invalid',
  'media-refused',
  'media-bad-status',
  'media-timeout',
  'media-unreachable',
  'media-too-large',
  'card-image-invalid',
])

function describe(err: unknown): string {
  if (err instanceof TransportError) return `${err.code}: ${err.message}`
  return err instanceof Error ? err.message : String(err)
}
