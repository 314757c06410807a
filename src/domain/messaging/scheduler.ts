import { GatewayError, type ErrorCode } from '../../errors.ts'
import type { Logger } from '../../logger.ts'
import { TransportError } from '../../ports/transport.ts'
import type { Device, Devices } from '../devices.ts'
import { decodeAction, describeAction, encodeAction, type Action } from './actions.ts'
import type { Messenger } from './messenger.ts'
import type { ScheduleItem, ScheduleStore } from './schedule-store.ts'
import type { ScheduleTime } from './schedule-time.ts'

/** Timing of the scheduler. */
export interface SchedulerOptions {
  /** Delays before each retry of a failed send; after the last, the item is marked failed. */
  retryMs: number[]
  /** Longest sleep between two scans of the store. */
  pollMs: number
  /** How long a claim holds an item (longer than any send can take). */
  leaseMs: number
}

/** Most scheduled sends under way at once (the rest wait for the next scan). */
const MAX_IN_FLIGHT = 100

/**
 * Sends scheduled items when due. Items live in Storage (ScheduleStore), so nothing is lost across
 * a restart: on start, and every `pollMs`, the store is scanned; one timer wakes the scheduler at the
 * next due time. Each due item is claimed before it is sent, then removed (sent) or retried with
 * back-off and finally marked failed. A device that connects is retried at once.
 */
export class Scheduler {
  private timer?: NodeJS.Timeout
  private wakeAt = Infinity
  private started = false
  private stopped = false
  private ticking?: Promise<void>
  private again = false
  private readonly eager = new Set<string>()
  private readonly inFlight = new Map<string, Promise<void>>()

  constructor(
    private readonly store: ScheduleStore,
    private readonly messenger: Messenger,
    private readonly devices: Devices,
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

  /** Scan now; with a device id, that device's items waiting for a retry go at once. */
  wake(deviceId?: string): void {
    if (!this.started || this.stopped) return
    if (deviceId) this.eager.add(deviceId)
    void this.tick()
  }

  /** Forget the items of a deleted device. */
  async removeDevice(device: Device): Promise<void> {
    await this.store.removeDevice(device.id)
  }

  /** Stop the timer and wait for sends under way. */
  async close(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    await this.ticking
    await Promise.all(this.inFlight.values())
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

  private async scan(): Promise<void> {
    const now = Date.now()
    const eager = new Set(this.eager)
    this.eager.clear()
    let next = now + this.options.pollMs
    for await (const item of this.store.all()) {
      if (this.stopped) return
      if (item.state !== 'pending' || this.inFlight.has(item.id)) continue
      if (item.claim && item.claim.until > now) {
        next = Math.min(next, item.claim.until)
        continue
      }
      const readyAt = eager.has(item.deviceId) ? item.dueAt : Math.max(item.dueAt, item.retryAt ?? 0)
      if (readyAt > now) next = Math.min(next, readyAt)
      else if (this.inFlight.size < MAX_IN_FLIGHT) this.dispatch(item)
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

  private dispatch(item: ScheduleItem): void {
    const run = this.send(item).catch(err => this.logger.error({ err, scheduleId: item.id }, 'scheduled send not recorded'))
    this.inFlight.set(item.id, run)
    void run.finally(() => {
      this.inFlight.delete(item.id)
      if (!this.stopped && this.inFlight.size === MAX_IN_FLIGHT - 1) void this.tick()
    })
  }

  private async send(item: ScheduleItem): Promise<void> {
    const claimed = await this.store.claim(item, this.options.leaseMs)
    if (!claimed) return
    const device = await this.devices.get(claimed.deviceId)
    const body = await this.store.body(claimed)
    if (!device || !body) {
      await this.store.fail(claimed, device ? 'action missing' : 'device deleted', undefined)
      return
    }
    try {
      const id = await this.messenger.perform(device, decodeAction(body))
      await this.store.complete(claimed)
      this.logger.info({ scheduleId: claimed.id, deviceId: device.id, messageId: id }, 'scheduled message sent')
    } catch (err) {
      if (err instanceof GatewayError && err.code === 'shutting-down') return this.store.release(claimed)
      const delay = isPermanent(err) ? undefined : this.options.retryMs[claimed.attempts]
      const retryAt = delay === undefined ? undefined : Date.now() + delay
      await this.store.fail(claimed, describe(err), retryAt)
      if (retryAt !== undefined) this.arm(Math.min(this.wakeAt, retryAt))
      this.logger.warn({ err, scheduleId: claimed.id, deviceId: device.id, retryAt }, retryAt ? 'scheduled send failed, will retry' : 'scheduled send failed')
    }
  }
}

// --- Internal helpers ---

/** Failures a retry cannot fix: the network refused the content or the target. */
function isPermanent(err: unknown): boolean {
  if (err instanceof TransportError) return err.code === 'invalid' || err.code === 'not-found' || err.code === 'not-admin'
  if (err instanceof GatewayError) return PERMANENT.has(err.code)
  return false
}

/** The refusals of the gateway itself that a retry cannot fix. */
const PERMANENT = new Set<ErrorCode>(['invalid-input', 'device-not-found', 'message-not-found', 'group-not-found', 'invite-invalid', 'media-refused', 'media-bad-status', 'media-timeout', 'media-unreachable', 'media-too-large', 'card-image-invalid'])

function describe(err: unknown): string {
  if (err instanceof TransportError) return `${err.code}: ${err.message}`
  return err instanceof Error ? err.message : String(err)
}
