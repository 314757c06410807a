import type { GatewayEvents } from '../../events.ts'
import { abortable } from '../abortable.ts'
import type { Logger } from '../../logger.ts'
import type { WebhookSender } from '../../ports/webhooks.ts'
import type { Devices } from '../devices.ts'
import type { WebhookSettings } from './config.ts'
import { leaseHolds, leaseOwner } from './lease.ts'
import type { DeadLetterReason, OutboxRecord, OutboxStore } from './outbox.ts'
import { parseRetryAfter, retryDelay } from './retry.ts'
import { DeliverySchedule } from './schedule.ts'
import { webhookHeaders } from './signer.ts'

/** What the loop needs from the gateway. */
export interface DeliveryDependencies {
  store: OutboxStore
  devices: Devices
  sender: WebhookSender
  events: GatewayEvents
  logger: Logger
  settings: WebhookSettings
  clock?: () => number
  random?: () => number
}

/** Longest single timer: shorter than setTimeout's limit, and harmless when the wall clock jumps. */
const MAX_TIMER_MS = 3_600_000
/** When to try again after an internal failure around an attempt (the store unreachable). */
const INTERNAL_RETRY_MS = 5_000
/** How long close() lets attempts in flight finish before aborting them. */
const CLOSE_GRACE_MS = 2_000

/** What one attempt got: a status (and Retry-After), or an error when there was no answer. */
type Outcome = { status: number; retryAfter?: string; error?: undefined } | { status?: undefined; error: string }

/**
 * Delivers the outbox. A bounded timetable (DeliverySchedule) says what is due when; due deliveries
 * wait in a per-device line and start while the device has fewer than `concurrencyPerDevice`
 * attempts in flight. The loop never awaits an attempt: a slow or dead receiver holds only its own
 * device's slots, never the timer or another device's deliveries. Each attempt claims its record
 * (a lease) first, signs the stored body afresh, and on failure writes the next due time back.
 */
export class DeliveryLoop {
  /** This process's name on the leases it takes. */
  readonly owner = leaseOwner()
  private readonly schedule: DeliverySchedule
  private readonly waiting = new Map<string, string[]>()
  private waitingCount = 0
  private readonly queued = new Set<string>()
  private readonly inFlight = new Map<string, AbortController>()
  private readonly busy = new Map<string, number>()
  private readonly running = new Set<Promise<void>>()
  private timer?: NodeJS.Timeout
  private timerAt = Infinity
  private reloading?: Promise<void>
  private closed = false
  private readonly clock: () => number
  private readonly random: () => number

  constructor(private readonly deps: DeliveryDependencies) {
    this.clock = deps.clock ?? Date.now
    this.random = deps.random ?? Math.random
    this.schedule = new DeliverySchedule(deps.settings.scheduleCapacity, () => this.waitingCount)
  }

  /** How long a claim holds: twice the attempt time-out plus a margin, so a live attempt never loses it. */
  get leaseMs(): number {
    return this.deps.settings.timeoutMs * 2 + 5_000
  }

  /** Load the pending deliveries from storage and start delivering. */
  start(): Promise<void> {
    return this.reload()
  }

  /** A delivery is due at `due` (a new event, or one rescheduled). */
  enqueue(key: string, deviceId: string, due: number): void {
    if (this.closed || this.inFlight.has(key) || this.queued.has(key)) return
    this.schedule.add({ key, deviceId, due })
    this.arm()
  }

  /** Forget what is held in memory for a deleted device (its records are deleted by the caller). */
  forgetDevice(deviceId: string): void {
    const line = this.waiting.get(deviceId) ?? []
    for (const key of line) this.queued.delete(key)
    this.waitingCount -= line.length
    this.waiting.delete(deviceId)
  }

  /** Stop: no new attempts; those in flight get a short grace, then are aborted (their records stay due). */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    clearTimeout(this.timer)
    let graceTimer: NodeJS.Timeout | undefined
    const grace = new Promise<void>(resolve => (graceTimer = setTimeout(resolve, CLOSE_GRACE_MS)))
    await Promise.race([Promise.allSettled([...this.running]), grace])
    clearTimeout(graceTimer)
    for (const controller of this.inFlight.values()) controller.abort(new Error('the gateway is closing'))
    await Promise.allSettled([...this.running])
    await this.reloading
  }

  // --- Internal helpers ---

  /** Set the one timer for the earliest due delivery (or reload, when there is room for one). */
  private arm(): void {
    if (this.closed) return
    const horizon = !this.reloading && this.roomToReload() ? this.schedule.horizon : Infinity
    const next = Math.min(this.schedule.peek()?.due ?? Infinity, horizon)
    if (next === Infinity || (this.timer && this.timerAt <= next)) return
    clearTimeout(this.timer)
    const now = this.clock()
    const delay = Math.min(Math.max(next - now, 0), MAX_TIMER_MS)
    this.timerAt = now + delay
    this.timer = setTimeout(() => this.tick(), delay)
    this.timer.unref()
  }

  private tick(): void {
    this.timer = undefined
    this.timerAt = Infinity
    if (this.closed) return
    const now = this.clock()
    const devices = new Set<string>()
    for (const item of this.schedule.takeDue(now)) {
      const line = this.waiting.get(item.deviceId) ?? []
      line.push(item.key)
      this.waiting.set(item.deviceId, line)
      this.queued.add(item.key)
      this.waitingCount++
      devices.add(item.deviceId)
    }
    for (const deviceId of devices) this.pump(deviceId)
    // Whatever was left out of the timetable is due: bring it in once half the timetable is free.
    if (this.schedule.horizon <= now && this.roomToReload() && !this.reloading) void this.reload()
    else this.arm()
  }

  /** Whether a reload would bring in a useful batch: half the timetable is free (so reloads stay rare). */
  private roomToReload(): boolean {
    const { capacity } = this.schedule
    return capacity - this.schedule.size - this.waitingCount >= Math.max(1, Math.floor(capacity / 2))
  }

  /** Start the device's waiting deliveries while it has free slots. */
  private pump(deviceId: string): void {
    const line = this.waiting.get(deviceId)
    while (!this.closed && line && line.length > 0 && (this.busy.get(deviceId) ?? 0) < this.deps.settings.concurrencyPerDevice) {
      const key = line.shift()!
      this.queued.delete(key)
      this.waitingCount--
      this.launch(key, deviceId)
    }
    if (line?.length === 0) this.waiting.delete(deviceId)
    if (this.schedule.horizon !== Infinity) this.arm()
  }

  private launch(key: string, deviceId: string): void {
    const controller = new AbortController()
    this.inFlight.set(key, controller)
    this.busy.set(deviceId, (this.busy.get(deviceId) ?? 0) + 1)
    const run: Promise<void> = this.attempt(key, controller)
      .catch(err => {
        this.deps.logger.error({ err, deviceId, key }, 'webhook attempt failed; retrying soon')
        return this.clock() + INTERNAL_RETRY_MS
      })
      .then(nextDue => {
        this.inFlight.delete(key)
        this.running.delete(run)
        const left = (this.busy.get(deviceId) ?? 1) - 1
        if (left > 0) this.busy.set(deviceId, left)
        else this.busy.delete(deviceId)
        if (nextDue !== undefined) this.enqueue(key, deviceId, nextDue)
        this.pump(deviceId)
      })
    this.running.add(run)
  }

  /** One attempt at one record; resolves with when to look at it again (undefined: done with it). */
  private async attempt(key: string, controller: AbortController): Promise<number | undefined> {
    const { store, devices, settings } = this.deps
    const now = this.clock()
    const claim = await store.claim(key, this.owner, now, this.leaseMs)
    if (claim.kind === 'missing') return undefined
    if (claim.kind === 'held') return claim.until
    if (claim.kind === 'later') return claim.due
    const record = claim.record
    const device = await devices.get(record.deviceId)
    if (!device) {
      await store.drop(key)
      return undefined
    }
    if (now - record.createdAt >= settings.maxAgeMs) return this.bury(key, record, 'max-age', { url: device.webhookUrl })
    const url = device.webhookUrl
    if (!url) return this.bury(key, record, 'no-webhook', {})

    const attempt = record.attempts + 1
    const outcome = await this.send(url, device.webhookSecret, record, controller)
    if (this.closed && controller.signal.aborted) {
      await store.retryLater(key, this.owner, { dueAt: now, counted: false })
      return undefined
    }
    const base = { deviceId: record.deviceId, eventId: record.id, url, attempt }
    if (outcome.status !== undefined && outcome.status >= 200 && outcome.status < 300) {
      await store.complete(key)
      this.deps.events.emit('delivery', { ...base, status: outcome.status })
      return undefined
    }
    if (outcome.status === 410) return this.gone(key, record, url)

    const failedAt = this.clock()
    const failure = { lastStatus: outcome.status, lastError: outcome.error }
    if (failedAt - record.createdAt >= settings.maxAgeMs) return this.bury(key, record, 'max-age', { url, ...failure, attempted: true })
    const retryAfter = outcome.status !== undefined ? parseRetryAfter(outcome.retryAfter, failedAt) : undefined
    const delay = retryAfter ?? retryDelay(settings.retryMs, attempt, this.random)
    const dueAt = Math.min(failedAt + delay, record.createdAt + settings.maxAgeMs)
    await store.retryLater(key, this.owner, { dueAt, counted: true, ...failure })
    this.deps.logger.debug({ ...base, status: outcome.status, error: outcome.error, retryInMs: dueAt - failedAt }, 'webhook attempt failed')
    this.deps.events.emit('delivery-failed', { ...base, ...defined({ status: outcome.status, error: outcome.error }), final: false })
    return dueAt
  }

  /** POST once through the sender, within the time-out; never throws. */
  private async send(url: string, secret: string, record: OutboxRecord, controller: AbortController): Promise<Outcome> {
    const headers = webhookHeaders(secret, record.id, record.body, this.clock())
    const timeoutMs = this.deps.settings.timeoutMs
    // The sender times out first; this guard is for senders that never settle.
    const timer = setTimeout(() => controller.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs + 1_000)
    try {
      const response = await abortable(this.deps.sender.send({ url, headers, body: record.body, signal: controller.signal }), controller.signal)
      if (!Number.isInteger(response?.status)) return { error: 'the webhook sender returned no status' }
      return { status: response.status, ...(response.retryAfter !== undefined ? { retryAfter: String(response.retryAfter) } : {}) }
    } catch (err) {
      return { error: err instanceof Error ? err.message : String(err) }
    } finally {
      clearTimeout(timer)
    }
  }

  /** The receiver answered 410 Gone: dead-letter the event, clear the device's webhook URL, dead-letter its other pending events. */
  private async gone(key: string, record: OutboxRecord, url: string): Promise<undefined> {
    const { store, devices, logger } = this.deps
    await this.bury(key, record, 'gone', { url, lastStatus: 410, attempted: true })
    await devices.update(record.deviceId, device => {
      if (device.webhookUrl === url) device.webhookUrl = undefined
    })
    logger.warn({ deviceId: record.deviceId, url }, 'webhook receiver answered 410 Gone: the device webhook is switched off')
    const others: [string, OutboxRecord][] = []
    for await (const entry of store.ofDevice(record.deviceId)) if (!this.inFlight.has(entry[0])) others.push(entry)
    for (const [otherKey, other] of others) await this.bury(otherKey, other, 'gone', { url })
    return undefined
  }

  /** Move a record to the dead letters and tell the host (`delivery-failed` with `final`). */
  private async bury(key: string, record: OutboxRecord, reason: DeadLetterReason, details: { url?: string; lastStatus?: number; lastError?: string; attempted?: boolean }): Promise<undefined> {
    const letter = await this.deps.store.deadLetter(key, reason, this.clock(), details)
    if (!letter) return undefined
    this.deps.logger.warn({ deviceId: record.deviceId, eventId: record.id, reason, attempts: letter.attempts }, 'webhook event moved to the dead letters')
    this.deps.events.emit('delivery-failed', {
      deviceId: record.deviceId,
      eventId: record.id,
      url: details.url ?? '',
      attempt: letter.attempts,
      ...defined({ status: details.lastStatus, error: details.lastError ?? reasonText[reason] }),
      final: true,
      reason,
    })
    return undefined
  }

  /** Rebuild the timetable from storage: at start-up, and when the clock reaches what was left out. */
  private reload(): Promise<void> {
    if (this.reloading) return this.reloading
    const run = async () => {
      this.schedule.beginReload()
      const now = this.clock()
      try {
        for await (const [key, record] of this.deps.store.pending()) {
          if (this.closed) return
          if (this.inFlight.has(key) || this.queued.has(key) || typeof record?.deviceId !== 'string') continue
          const due = leaseHolds(record.lease, this.owner, now) ? record.lease!.until : Number(record.dueAt) || now
          this.schedule.add({ key, deviceId: record.deviceId, due })
        }
      } catch (err) {
        this.deps.logger.error({ err }, 'loading pending webhook deliveries failed; trying again soon')
        this.schedule.leaveOut(this.clock() + INTERNAL_RETRY_MS)
      }
    }
    this.reloading = run().finally(() => {
      this.reloading = undefined
      this.arm()
    })
    return this.reloading
  }
}

// --- Internal helpers ---

const reasonText: Record<DeadLetterReason, string> = {
  'max-age': 'older than the maximum age',
  gone: 'the receiver answered 410 Gone',
  'no-webhook': 'the device has no webhook URL',
}

function defined<T extends Record<string, unknown>>(object: T): Partial<T> {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as Partial<T>
}
