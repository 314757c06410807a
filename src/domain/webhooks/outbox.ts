import type { IncomingMessage } from '../../ports/transport.ts'
import type { Storage } from '../../ports/storage.ts'
import type { KeyedLock } from '../../store/keyed-lock.ts'
import { createRetryBuffer, type RetryBuffer } from '../../store/retry-buffer.ts'
import type { SpillFile } from '../../store/spill-file.ts'
import type { CacheEpoch } from '../../store/cache-epoch.ts'
import { claimedUntil } from '../claims.ts'
import type { Device } from '../devices.ts'
import { DueWork } from '../due-work.ts'
import type { MessageFeed } from '../message-feed.ts'
import { createDeliveryAttempts, type DeliveryDependencies } from './attempt.ts'
import { createOutboxStore, eventId, newOutboxRecord, outboxKey, type OutboxStore, type DeadLetter, type OutboxRecord } from './outbox-store.ts'
import { failurePayload, webhookPayload, type MessageFailure, type WebhookPayload } from './payload.ts'

/** What the host can do with webhook deliveries (`gateway.webhooks`). */
export interface WebhookAdmin {
  /** Events that stopped being retried, newest first (kept 30 days). */
  deadLetters(filter?: { deviceId?: string; limit?: number }): Promise<DeadLetter[]>
  /** Put a dead letter back in the outbox (same `webhook-id`, fresh age); false when there is no such dead letter (also when another redrive, in any process, or a discard took it first). */
  redrive(id: string): Promise<boolean>
  /** Delete a dead letter; false when there was none. */
  discard(id: string): Promise<boolean>
  /** Number of events waiting for delivery, of one device or of all (a scan of the outbox). */
  pending(deviceId?: string): Promise<number>
  /** Events waiting (in memory or spilled) because the store refused them (it was down); stored once it answers. */
  readonly unrecordedCount: number
}

/** The webhook outbox: stores every event of a device with a webhook (a feed subscriber, before the publish resolves) and delivers it at least once in per-device lanes (DueWork). A record is scheduled by its owner instance; one of a gone instance is adopted. */
export class WebhookOutbox implements WebhookAdmin {
  private readonly store: OutboxStore
  private readonly loop: DueWork<OutboxRecord>
  private readonly unrecorded: RetryBuffer<{ key: string; record: OutboxRecord }>
  private readonly attempts: ReturnType<typeof createDeliveryAttempts>

  constructor(private readonly deps: Omit<DeliveryDependencies, 'store'> & { storage: Storage; lock: KeyedLock; spill?: SpillFile; epoch?: CacheEpoch }) {
    const store = (this.store = createOutboxStore(deps.storage, deps.lock))
    const attempts = (this.attempts = createDeliveryAttempts({ ...deps, store }, () => this.loop))
    // Any account change, in any process (a resume, a renewal), drops the cached records: the held events of an account active again go out at once.
    deps.epoch?.register({ forget: () => attempts.wake() })
    const { liveness, settings } = deps
    this.loop = new DueWork<OutboxRecord>(
      {
        what: 'webhook',
        all: () => store.pending(),
        ofLane: deviceId => store.ofDevice(deviceId),
        laneOf: record => record?.deviceId,
        // Its own records (adopted when their owner is gone), when due or when a lease held elsewhere ends.
        async dueOf(key, found, now) {
          const record = found.owner === liveness.id ? found : liveness.isAlive(found.owner) ? undefined : await store.adopt(key, liveness)
          return record && (claimedUntil(record.lease, liveness, { ownYields: true, now }) ?? (Number(record.dueAt) || now))
        },
        run: (key, lane, shutdown) => attempts.run(key, lane, shutdown),
      },
      { ...settings, closeGraceMs: settings.timeoutMs + 1_000 },
      deps.logger,
    )
    liveness.onDeparture(() => void this.loop.rescan())
    this.unrecorded = createRetryBuffer({
      what: 'webhook events',
      process: ({ key, record }) => this.save(key, record),
      logger: deps.logger,
      memoryLimit: 10_000,
      spill: deps.spill,
    })
  }

  /** Feed subscriber: a message's event, stored then scheduled, unless the device has no webhook or its switch (operation 20) is off. */
  readonly record = (device: Device, message: IncomingMessage): Promise<void> | undefined =>
    this.recordPayload(device, wanted(device, message.isGroup) && webhookPayload(device, message))

  /** A sent message the network reports as not delivered: a `Falha` event (from the device's LID, `lid`, when known), recorded like a message's. */
  recordFailure(device: Device, failure: MessageFailure, lid?: string): Promise<void> | undefined {
    return this.recordPayload(device, wanted(device, failure.chat.endsWith('@g.us')) && failurePayload(device, failure, lid))
  }

  get unrecordedCount(): number {
    return this.unrecorded.size
  }

  /** The store answers again after a failure (guardStorage's `onAnswer`): the events it refused are written at once, not at the next retry. */
  readonly storeAnswers = (): void => void this.unrecorded.offered(true)

  /** Replay spilled events, load pending deliveries and start delivering: the stored events go out even when the spilled ones cannot be replayed (then rejects with why). */
  async start(): Promise<void> {
    try {
      await this.unrecorded.start()
    } finally {
      await this.loop.start()
    }
  }

  /** Stop delivering: no new attempts, and no POST from one still reading its record; POSTs under way finish (within the time-out and its 1 s hang guard, the close's grace), so none is cut short to be sent again. */
  async close(): Promise<void> {
    await this.unrecorded.close()
    await this.loop.close()
  }

  /** Removal hook: a deleted device's events and dead letters are deleted. */
  async removeDevice(device: Device): Promise<void> {
    this.loop.forgetLane(device.id)
    this.attempts.forget(device.id)
    await this.store.removeDevice(device.id)
  }

  readonly deadLetters: WebhookAdmin['deadLetters'] = filter => this.store.deadLetters(filter)
  readonly discard: WebhookAdmin['discard'] = id => this.store.discard(id)
  readonly pending: WebhookAdmin['pending'] = deviceId => this.store.count(deviceId)

  async redrive(id: string): Promise<boolean> {
    const record = await this.store.redrive(id, Date.now(), this.deps.liveness.id)
    if (record) this.loop.enqueue(outboxKey(record.deviceId, record.id), record.deviceId, record.dueAt)
    return record !== undefined
  }

  // --- Internal helpers ---

  private recordPayload(device: Device, payload: WebhookPayload | false | undefined): Promise<void> | undefined {
    if (!payload) return undefined
    const event = { id: eventId(device.id, payload), deviceId: device.id, accountId: device.accountId, event: payload.event, body: JSON.stringify(payload) }
    const record = newOutboxRecord(event, Date.now(), this.deps.liveness.id)
    const key = outboxKey(device.id, record.id)
    return this.save(key, record).catch(err => this.unrecorded.keep({ key, record }, err))
  }

  /** Store a new event and schedule it; one already pending is tracked (its own write whose answer was lost may have landed). */
  private async save(key: string, record: OutboxRecord): Promise<void> {
    const added = await this.store.add(record)
    this.deps.logger.debug({ key, added }, added ? 'webhook event recorded' : 'webhook event already pending')
    if (added) return this.loop.enqueue(key, record.deviceId, Date.now())
    const pending = await this.store.get(key)
    if (pending) await this.loop.track(key, pending)
  }
}

/** Build the outbox: subscribe it to the feed, hook device removal, start delivering. */
export function startWebhookOutbox(deps: ConstructorParameters<typeof WebhookOutbox>[0] & { feed: MessageFeed }): WebhookOutbox {
  const outbox = new WebhookOutbox(deps)
  deps.feed.subscribe(outbox.record)
  deps.devices.onRemove(device => outbox.removeDevice(device))
  outbox.start().catch(err => deps.logger.error({ err }, 'webhook outbox: spilled events not replayed, or pending ones not loaded'))
  return outbox
}

/** Whether the device has a webhook and its switch (operation 20) for the channel (1:1 or group) is not off. */
function wanted(device: Device, isGroup: boolean): boolean {
  return !!device.webhookUrl && device.webhookEvents?.[isGroup ? 'group' : 'chat'] !== false
}
