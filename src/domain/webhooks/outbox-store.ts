import { createHash, randomUUID } from 'node:crypto'
import type { Storage } from '../../ports/storage.ts'
import { Collection } from '../../store/collection.ts'
import type { KeyedLock } from '../../store/keyed-lock.ts'
import { claimedUntilConfirmed, newClaim, ownerGone, type Claim } from '../claims.ts'
import type { Liveness } from '../instances.ts'
import { defined, type WebhookEventName, type WebhookPayload } from './payload.ts'

/** One event waiting for delivery, as stored under `webhook-outbox:<deviceId>:<id>`. */
export interface OutboxRecord {
  /** The `webhook-id`: the same on every attempt. */
  id: string
  deviceId: string
  accountId: string
  event: WebhookEventName
  /** The exact JSON body, signed afresh on every attempt. */
  body: string
  createdAt: number
  /** When the next attempt may start. */
  dueAt: number
  attempts: number
  /** The instance that schedules its attempts (it recorded it, or adopted it when that one was gone). */
  owner?: string
  /** Present while a process is delivering it. */
  lease?: Claim
  lastStatus?: number
  lastError?: string
  /** Set anew by each redrive: a dead-lettering (or an attempt) that read the record before it leaves the event pending. */
  redrive?: string
}

/** Why an event stopped being retried (older than webhookMaxAgeMs, the receiver answered 410, the device has no webhook URL any more). */
export type DeadLetterReason = 'max-age' | 'gone' | 'no-webhook'

/** An event that will not be retried unless the host redrives it; kept 30 days. */
export interface DeadLetter extends Pick<OutboxRecord, 'id' | 'deviceId' | 'accountId' | 'event' | 'body' | 'createdAt' | 'attempts'> {
  deadAt: number
  reason: DeadLetterReason
  /** The receiver it was last tried against. */
  url?: string
  /** The outcome of its last attempt: the status it got, or the error when it got none (or, for one held unattempted at its maximum age, `lastError` says why). */
  lastStatus?: number
  lastError?: string
}

/** Facts a dead letter keeps of its last attempt (`attempted`: that attempt counts). */
export type DeadLetterDetails = { url?: string; lastStatus?: number; lastError?: string; attempted?: boolean }

const DEAD_LETTER_TTL_MS = 30 * 86_400_000 // kept 30 days

/** The durable outbox: one record per undelivered event, plus the dead letters. An attempt claims its record (a Claim) before sending; every change is a compare-and-set of the record (docs/scaling.md#what-is-safe). */
export type OutboxStore = ReturnType<typeof createOutboxStore>

/** An outbox store over `storage`. */
export function createOutboxStore(storage: Storage, lock: KeyedLock) {
  const records = new Collection<OutboxRecord>(storage, lock, 'webhook-outbox')
  const dead = new Collection<DeadLetter>(storage, lock, 'webhook-dead')
  return {
    /** Record a new event; false when it is already pending (the same message published twice, by any process). */
    add: (record: OutboxRecord): Promise<boolean> => records.create(outboxKey(record.deviceId, record.id), record),
    /**
     * Take over a record whose owner is gone (or that has none), dropping a void lease; the record when it is `me`'s now. Gone by the
     * last registry read and by its instance record read after this record (as a device lease's takeover): the last read may be a
     * heartbeat old, and a process back from a pause registers again before it claims anything (docs/scaling.md).
     */
    async adopt(key: string, liveness: Liveness): Promise<OutboxRecord | undefined> {
      const me = liveness.id
      const result = await records.update(key, async current => {
        if (!current || current.owner === me || !(await ownerGone(current.owner, liveness))) return undefined
        const { lease, ...rest } = current
        return { ...rest, owner: me, ...((await claimedUntilConfirmed(lease, liveness)) !== undefined ? { lease } : {}) }
      })
      return result?.owner === me ? result : undefined
    },
    /** A pending record, or undefined. */
    get: (key: string): Promise<OutboxRecord | undefined> => records.get(key),
    /** Claim a record for one attempt, for `leaseMs`: the claimed record; when to look again while another instance's claim holds or it is not due (the record is the truth, the timetable a hint); undefined when it is gone. */
    async claim(key: string, liveness: Liveness, now: number, leaseMs: number): Promise<OutboxRecord | number | undefined> {
      let taken: OutboxRecord | number | undefined
      await records.update(key, async current => {
        // `change` may run again on a newer record: decide from it alone (and from its lease holder's instance record, read after it).
        const held =
          current && ((await claimedUntilConfirmed(current.lease, liveness, { ownYields: true, now })) ?? (current.dueAt > now ? current.dueAt : undefined))
        taken = current && (held ?? { ...current, lease: newClaim(liveness.id, leaseMs, now) })
        return typeof taken === 'object' ? taken : undefined
      })
      return taken
    },
    /**
     * After an attempt that did not deliver: set the next due time, count the attempt (unless `counted` is false), release the claim;
     * only while the record still holds that attempt's claim (`token`): one taken over since (its holder judged gone, the event adopted
     * and attempted by another, that claim released or not) is the new holder's, and a late word of the lost attempt changes nothing.
     */
    async retryLater(key: string, token: string | undefined, next: { dueAt: number; counted: boolean; lastStatus?: number; lastError?: string }) {
      return records.update(key, current => {
        if (!current || token === undefined || current.lease?.token !== token) return undefined
        const { lease: _released, lastStatus: keptStatus, lastError: keptError, ...rest } = current
        const { dueAt, counted, lastStatus, lastError } = next
        // A counted attempt's outcome replaces the last one whole (its status, or its error when it got none); an uncounted one keeps it.
        const last = counted ? { lastStatus, lastError } : { lastStatus: keptStatus, lastError: keptError }
        return { ...rest, dueAt, attempts: current.attempts + (counted ? 1 : 0), ...defined(last) }
      })
    },
    /** Forget a pending event: delivered, or its device is gone. */
    complete: (key: string): Promise<boolean> => records.remove(key),
    /**
     * Move a pending event to the dead letters (written before the record is removed: a crash between leaves a duplicate, never a loss);
     * `spare`: leave a record it names as it is (undefined then), taking back the letter this call wrote for it (the record is still
     * pending). A record gone meanwhile keeps the letter: another dead-lettering of it (two 410s at once) may have removed it, relying
     * on that letter, which cannot be told from a delivery (then the letter is a duplicate, never a loss); but when `deviceGone` says
     * its device is being deleted (removeDevice's scan of the letters may have run before this call wrote it), the letter goes too.
     * A record redriven since it was read (a new `redrive`) stays pending, and the letter this call wrote is taken back.
     */
    async deadLetter(
      key: string,
      reason: DeadLetterReason,
      now: number,
      details: DeadLetterDetails = {},
      spare?: (record: OutboxRecord) => boolean,
      deviceGone?: (deviceId: string) => Promise<boolean>,
    ): Promise<DeadLetter | undefined> {
      let [written, first]: [DeadLetter | undefined, OutboxRecord | undefined] = [undefined, undefined]
      for (;;) {
        const current = await records.load(key)
        if (!current) {
          if (written && (await deviceGone?.(written.deviceId))) await dead.removeIfEqual(written.id, written)
          return undefined
        }
        first ??= current
        if (spare?.(current) || current.redrive !== first.redrive) {
          if (written) await dead.removeIfEqual(written.id, written) // only the letter this call wrote, not one another process wrote since
          return undefined
        }
        const { id, deviceId, accountId, event, body, createdAt } = current
        // The attempt that ends it is the last one: its outcome alone, not beside an earlier attempt's.
        const last = details.attempted ? details : { lastStatus: details.lastStatus ?? current.lastStatus, lastError: details.lastError ?? current.lastError }
        const letter: DeadLetter = {
          ...{ id, deviceId, accountId, event, body, createdAt },
          attempts: current.attempts + (details.attempted ? 1 : 0),
          deadAt: now,
          reason,
          ...defined({ url: details.url, lastStatus: last.lastStatus, lastError: last.lastError }),
        }
        await dead.put(letter.id, letter, DEAD_LETTER_TTL_MS)
        written = letter
        // Only the record that was read: one changed meanwhile (by another process) is read again.
        if (await records.removeIfEqual(key, current)) return letter
      }
    },
    /** Every pending record (a scan, in pages). */
    pending: (): AsyncIterable<[key: string, record: OutboxRecord]> => records.all(),
    /** The pending records of one device. */
    ofDevice: (deviceId: string): AsyncIterable<[key: string, record: OutboxRecord]> => records.withPrefix(`${deviceId}:`),
    /** Number of pending events, of one device or of all. */
    async count(deviceId?: string): Promise<number> {
      let count = 0
      for await (const _ of deviceId === undefined ? records.all() : records.withPrefix(`${deviceId}:`)) count++
      return count
    },
    /** Dead letters, newest first, optionally of one device only; a scan that holds about `limit` of them at once (bodies may carry media). */
    async deadLetters({ deviceId, limit = Infinity }: { deviceId?: string; limit?: number } = {}): Promise<DeadLetter[]> {
      let letters: DeadLetter[] = []
      const newest = () => (letters = letters.sort((a, b) => b.deadAt - a.deadAt).slice(0, Math.max(0, limit)))
      for await (const [, letter] of dead.all()) if ((deviceId ?? letter.deviceId) === letter.deviceId && letters.push(letter) > 2 * limit + 100) newest()
      return newest()
    },
    /**
     * Put a dead letter back in the outbox as a fresh event (same id, age and attempts from zero), removing that letter (not a newer
     * one); the new record, or the pending one a dead-lettering cut short or under way left, made fresh in place (its lease kept: an
     * attempt may be under way) with a new `redrive`, so that dead-lettering leaves it pending; or undefined. The
     * call that removes the letter it read is the one that redrove it: another (a redrive by another process, a discard) took it
     * first, and the record this call put back is taken back (else an event redriven at once by two processes was delivered twice), or
     * the pending one it made fresh is put back as it was, unless changed since (else both redrives answered true, and a discarded
     * event was kept for delivery).
     */
    async redrive(id: string, now: number, owner: string): Promise<OutboxRecord | undefined> {
      for (;;) {
        const letter = await dead.get(id)
        if (!letter) return undefined
        const { deviceId, accountId, event, body } = letter
        const fresh = { ...newOutboxRecord({ id, deviceId, accountId, event, body }, now, owner), redrive: randomUUID() }
        const [key, record] = [outboxKey(deviceId, id), fresh]
        // Only the letter read, and only once this call put the event back: a newer letter (the event buried again meanwhile) stays.
        if (await records.create(key, record)) {
          if (await dead.removeIfEqual(id, letter)) return record
          await records.removeIfEqual(key, record) // the letter was taken meanwhile: read it again (gone, or a newer one)
          continue
        }
        // Still pending (a dead-lettering cut short, or one under way): made fresh, its scheduler and lease kept; gone meanwhile: read again.
        const { createdAt, dueAt, attempts, redrive } = fresh
        let before: OutboxRecord | undefined
        const pending = await records.update(key, current => {
          const { lastStatus: _status, lastError: _error, ...kept } = (before = current) ?? {}
          return current && { ...(kept as OutboxRecord), createdAt, dueAt, attempts, redrive }
        })
        if (!pending) continue
        if (await dead.removeIfEqual(id, letter)) return pending
        // The letter was taken meanwhile (another redrive, a discard) or buried anew: the record goes back as it was (unless changed since),
        // and the letter is read again (before, this call answered true as well, and kept a discarded event for delivery).
        await records.replace(key, pending, before!)
      }
    },
    /** Delete a dead letter; true when it existed. */
    discard: (id: string): Promise<boolean> => dead.remove(id),
    /** Delete everything of a device: its pending events and its dead letters. */
    async removeDevice(deviceId: string): Promise<void> {
      await records.removeWithPrefix(`${deviceId}:`)
      for await (const [id, letter] of dead.all()) if (letter.deviceId === deviceId) await dead.remove(id) // as listed, as removeWithPrefix does
    },
  }
}

/** A new pending record of an event, due at once, scheduled by `owner`. */
export function newOutboxRecord(event: Pick<OutboxRecord, 'id' | 'deviceId' | 'accountId' | 'event' | 'body'>, now: number, owner: string): OutboxRecord {
  return { ...event, createdAt: now, dueAt: now, attempts: 0, owner }
}

/** The outbox key of a device's event. */
export function outboxKey(deviceId: string, id: string): string {
  return `${deviceId}:${id}`
}

/** The `webhook-id` of a device's event (`body`: its webhook body), from the event name and where its message id belongs: an id is chosen by the sender's client and names one message only within its chat, direction and (in a group) sender, so the same message handed over twice is one event and another one with its id elsewhere another. A contact is named by its LID when the network gives one (its phone may be learned later). See docs/api.md, "Headers and signature". */
export function eventId(deviceId: string, body: WebhookPayload): string {
  const place = body.fromMe ? ['me', body.chat] : ['contact', body.isGroup ? body.chat : '', body.fromLid ?? body.from]
  const hash = createHash('sha256').update(JSON.stringify([deviceId, body.event, body.idMessagem, ...place]))
  return `msg_${hash.digest('base64url').slice(0, 27)}`
}
