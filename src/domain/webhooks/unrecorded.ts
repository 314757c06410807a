import type { Logger } from '../../logger.ts'
import type { OutboxRecord } from './outbox.ts'

/** Events waiting in memory at most; past this, an event the store refuses is lost (and logged). */
export const MAX_UNRECORDED = 10_000

/**
 * Webhook events the store did not take (it was down): kept in memory and offered again, every
 * second at first and backing off to 30 s, until the store takes them. A request can be answered
 * from cached records while the store is down, so a sent text's event must survive the outage; what
 * waits here is lost only if the process stops before the store comes back (logged with the count).
 */
export class UnrecordedEvents {
  private readonly waiting = new Map<string, OutboxRecord>()
  private timer: NodeJS.Timeout | undefined
  private delayMs = RETRY_FIRST_MS
  private closed = false

  /** `save` writes one event to the store (and schedules it); it throws while the store is down. */
  constructor(
    private readonly save: (key: string, record: OutboxRecord) => Promise<void>,
    private readonly logger: Logger,
  ) {}

  /** Keep an event the store just refused. */
  keep(key: string, record: OutboxRecord, err: unknown): void {
    if (this.waiting.size >= MAX_UNRECORDED) {
      this.logger.error({ err, deviceId: record.deviceId, eventId: record.id }, `webhook event lost: the store is down and ${MAX_UNRECORDED} events already wait in memory`)
      return
    }
    if (this.waiting.size === 0) this.logger.warn({ err }, 'the store did not take a webhook event; keeping events in memory until it does')
    this.waiting.set(key, record)
    this.schedule()
  }

  /** Events waiting in memory. */
  get size(): number {
    return this.waiting.size
  }

  /** Offer what waits once more, then stop retrying; whatever the store still refuses is logged as lost. */
  async close(): Promise<void> {
    this.closed = true
    clearTimeout(this.timer)
    await this.flush()
    if (this.waiting.size > 0) this.logger.error({ count: this.waiting.size }, 'webhook events lost: the store was still down when the gateway stopped')
  }

  private schedule(): void {
    if (this.timer || this.closed) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      void this.flush().then(() => {
        if (this.waiting.size > 0) this.schedule()
      })
    }, this.delayMs)
  }

  /** Save what waits, oldest first; stop at the first refusal (the store is still down) and back off. */
  private async flush(): Promise<void> {
    for (const [key, record] of this.waiting) {
      try {
        await this.save(key, record)
        this.waiting.delete(key)
      } catch {
        this.delayMs = Math.min(this.delayMs * 2, RETRY_MAX_MS)
        return
      }
    }
    if (this.delayMs !== RETRY_FIRST_MS) this.logger.info({}, 'webhook events kept in memory are stored now')
    this.delayMs = RETRY_FIRST_MS
  }
}

const RETRY_FIRST_MS = 1000
const RETRY_MAX_MS = 30_000
