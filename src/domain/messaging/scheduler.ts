import { GatewayError, type ErrorCode } from '../../errors.ts'
import type { Logger } from '../../logger.ts'
import { TransportError } from '../../ports/transport.ts'
import type { Accounts } from '../accounts.ts'
import { claimedUntil } from '../claims.ts'
import type { Device, Devices } from '../devices.ts'
import { DueWork } from '../due-work.ts'
import { fenceMark, unfencedSince, type Fence, type Liveness } from '../instances.ts'
import { decodeAction, describeAction, encodeAction, type Action } from './actions.ts'
import type { Messenger } from './messenger.ts'
import { itemKey, type ScheduleItem, type ScheduleStore } from './schedule-store.ts'
import type { ScheduleTime } from './schedule-time.ts'

/** Delays before each retry (then failed), store rescan period, claim length (longer than any send), wait for an away device (then failed). */
type Timing = Record<'pollMs' | 'leaseMs' | 'maxWaitMs', number> & { retryMs: number[] }
/** `fence`: this instance's (its heartbeat late, the others may soon judge it gone and take its claims); a send begins only if its claim was made unfenced and no fence was raised since. */
type Services = { devices: Devices; accounts: Pick<Accounts, 'get' | 'active'>; liveness: Liveness; fence?: Fence }

/** When a send that never started (it waited too long in the device's queue) is tried again. */
const REQUEUE_MS = 1_000

/** Sends scheduled items when due, one at a time per device (DueWork lanes of one), each claimed just before it is sent, so waiting behind other sends is never an attempt. Items of a device not connected here wait for it (up to `maxWaitMs`) without spending retries. */
export function createScheduler(store: ScheduleStore, messenger: Messenger, { devices, accounts, liveness, fence }: Services, options: Timing, logger: Logger) {
  /** Devices that just connected, and the items found then waiting for a retry: those go at once (their next failure waits again). */
  const [eager, hurried] = [new Set<string>(), new Set<string>()]
  /** Devices not connected here, with when the first of their due items runs out of waiting. */
  const away = new Map<string, number>()
  /** Each device's last connection (wake), numbered: a send that read the status before it must not park the device again. */
  const woken = new Map<string, number>()
  let wakes = 0
  const outcomes = new Map<string, () => Promise<number | undefined>>() // sent or failed, not yet so in the store: recorded at their next run, never sent again
  let started = false
  const work = new DueWork<ScheduleItem>(
    {
      what: 'schedule',
      all: () => remembering(store.all()),
      ofLane: deviceId => store.all(deviceId),
      laneOf: item => item?.deviceId,
      orderOf: item => item?.createdAt ?? 0,
      dueOf: async (key, item, now) => dueOf(key, item, now),
      run: key => send(key),
    },
    { concurrencyPerLane: 1, maxLanes: 100, capacity: 10_000, lineLimit: 1_000, reconcileMs: options.pollMs },
    logger,
  )
  liveness.onDeparture(() => void (started && work.rescan()))

  /** A full scan of the stored items; once listed to the end, the devices remembered with none left are forgotten (deleted by another process, whose removal hooks ran there). A wake since the scan began is kept (a send may be checking it). */
  async function* remembering(items: AsyncIterable<[string, ScheduleItem]>): AsyncIterable<[string, ScheduleItem]> {
    const [listed, wakesBefore] = [new Set<string>(), wakes]
    for await (const entry of items) yield (listed.add(entry[1].deviceId), entry)
    for (const id of away.keys()) if (!listed.has(id)) away.delete(id)
    for (const [id, wake] of woken) if (!listed.has(id) && wake <= wakesBefore) woken.delete(id)
  }

  /** When a stored item is next due here: at the end of a claim held elsewhere, after its device's wait, at its (retry) time (a hint by the last registry read: `store.claim` decides, reading a gone holder's record). */
  function dueOf(key: string, item: ScheduleItem, now: number): number | undefined {
    if (item.state !== 'pending' && !item.quota) return undefined
    const claimed = claimedUntil(item.claim, liveness, { now })
    if (claimed !== undefined || item.quota) return claimed ?? now // a `quota` mark: settled once its holder's claim is void
    if (item.retryAt && eager.has(item.deviceId)) hurried.add(key) // remembered until it runs: the refresh that found it only queues it
    const ready = hurried.has(key) ? item.dueAt : Math.max(item.dueAt, item.retryAt ?? 0)
    return Math.max(ready, away.get(item.deviceId) ?? 0)
  }

  /** One item: claim it, send it through the device's queue, record the outcome; when to look at it again. */
  async function send(key: string): Promise<number | undefined> {
    const recorded = await outcomes.get(key)?.()
    if (outcomes.delete(key)) return recorded
    const wakesBefore = wakes
    const item = await store.get(key)
    const now = Date.now()
    const due = item && dueOf(key, item, now)
    if (!item || due === undefined) return void hurried.delete(key)
    if (due > now) return due
    const device = await devices.get(item.deviceId)
    const away = device !== undefined && !(await devices.status(device)).connected
    // A suspended or expired account's item is failed when due, its device away or not (else sent once both are back).
    const active = accounts.active(await accounts.get(item.accountId))
    // Connected since this run began (the wake came meanwhile): given back at its due time, so it takes its place in the device's line
    // among the items the wake found waiting (parked before it, or in the line behind it); the line waits for that read.
    if (wokenSince(item, wakesBefore)) return item.dueAt
    hurried.delete(key)
    if (away && active && !item.quota && now < item.dueAt + options.maxWaitMs) return waitAway(item, now)
    // Read before the claim is written: fenced then (back from a pause, not yet registered again), the claim may land first and be taken
    // over by a process that read this one's record still absent; a fence raised since may have let another judge this one gone.
    const fences = fence && fenceMark(fence)
    const claimed = await store.claim(item, options.leaseMs, liveness)
    if (!claimed) return undefined
    if (claimed.quota) return void (await store.settle(claimed)) // an add or a removal cut short (a crash, a store failure): finished here
    const body = device && !away && active ? await store.body(claimed) : undefined
    if (!device || !body) {
      const why = away ? `the device was not connected within ${Math.round(options.maxWaitMs / 1000)} s of the due time` : 'action missing'
      await store.fail(claimed, !device ? 'device deleted' : !active ? 'account suspended or expired' : why)
      return undefined
    }
    try {
      const id = await messenger.perform(device, decodeAction(body), { before: () => stillHeld(claimed, fences) })
      outcomes.set(key, async () => void (await store.complete(claimed)))
      logger.info({ scheduleId: claimed.id, deviceId: device.id, messageId: id }, 'scheduled message sent')
    } catch (err) {
      if (err instanceof NotHeld) {
        // Nothing reached the network: not an attempt. Taken over (this process was judged gone meanwhile): the new holder's to send;
        // fenced at or since the claim, or the check not answered (the store away): released (while still ours), tried again shortly, its retries untouched.
        logger.warn({ err: err.cause, scheduleId: claimed.id, deviceId: device.id }, err.message)
        if (!err.requeue) return undefined
        await store.release(claimed)
        return Date.now() + REQUEUE_MS
      }
      const notConnected = (err as { code?: string }).code === 'not-connected'
      // Waiting (shutdown, a full or slow queue, the device gone away meanwhile) is never an attempt; a device that says it is connected
      // and refuses the send once the item's wait ran out is one (else it is tried again at once, for ever, never counted).
      if (neverStarted(err) && !(notConnected && Date.now() >= item.dueAt + options.maxWaitMs)) {
        await store.release(claimed)
        if (!notConnected) return Date.now() + REQUEUE_MS
        // Connected again while the send was refused (the wake came meanwhile, finding this item in flight): given back at its due time,
        // so it takes its place in the device's line ahead of the later items (put off a second, it went after them), hurried as the wake would have.
        return wokenSince(item, wakesBefore) ? (hurried.add(key), item.dueAt) : waitAway(item, Date.now())
      }
      const delay = isPermanent(err) ? undefined : options.retryMs[claimed.attempts]
      const retryAt = delay === undefined ? undefined : Date.now() + delay
      outcomes.set(key, async () => (await store.fail(claimed, describe(err), retryAt), retryAt))
      logger.warn({ err, scheduleId: claimed.id, deviceId: device.id, retryAt }, retryAt ? 'scheduled send failed, will retry' : 'scheduled send failed')
    }
    return send(key)
  }

  /**
   * Right before the transport send (after the wait in the device's queue): the store still holds this process's claim (one read), and
   * this instance was not fenced at the claim (`fences`, its mark) nor since, so its heartbeat is on time after that read (nobody may judge
   * it gone for a third of the ttl yet) and nobody could take the claim over on a read of its record while it was gone, landing after
   * this check. A process stalled after its claim (a pause, a long GC, the store away) sends nothing (docs/scaling.md). A read the store
   * could not answer is no attempt either: the send is put off (released, tried again shortly).
   */
  async function stillHeld(claimed: ScheduleItem, fences: number | undefined): Promise<void> {
    let held: boolean
    try {
      held = await store.holds(claimed)
    } catch (err) {
      throw new NotHeld('scheduled send put off: its claim could not be checked (the store did not answer)', true, err)
    }
    if (!held) throw new NotHeld('scheduled send dropped: another process took the item over (this one was judged gone)', false)
    if (fence && !unfencedSince(fence, fences ?? NaN))
      throw new NotHeld('scheduled send put off: this instance was fenced (its heartbeat late) at or since its claim', true)
  }

  /** Whether the item's device connected here since `wakesBefore`. */
  function wokenSince(item: ScheduleItem, wakesBefore: number): boolean {
    return (woken.get(item.deviceId) ?? 0) > wakesBefore
  }

  /** The device is not connected here (and did not connect since the item's run began): its items wait for it (a connection wakes them) until the first one's wait runs out. */
  function waitAway(item: ScheduleItem, now: number): number {
    const current = away.get(item.deviceId) ?? 0
    const until = Math.min(current > now ? current : Infinity, item.dueAt + options.maxWaitMs)
    away.set(item.deviceId, until)
    return until
  }

  return {
    /** Store `action` to be done at `time`; answers the stored item. */
    async schedule(device: Device, action: Action, time: ScheduleTime): Promise<ScheduleItem> {
      const input = { accountId: device.accountId, deviceId: device.id, to: action.to, summary: describeAction(action), dueAt: time.at, agendamento: time.text }
      const item = await store.add(input, encodeAction(action), liveness.id)
      // Deleted meanwhile (its removal may have listed the device's items before this one): taken back. A check the store cannot answer
      // answers the stored item all the same: an error would have the client schedule it again, to be sent twice (an item of a device
      // deleted after all is failed when due, `device deleted`).
      const stored = await devices
        .load(device.id)
        .catch(err => (logger.warn({ err, scheduleId: item.id }, 'scheduled item stored; its device not checked again'), device))
      if (!stored || stored.removing) throw (await store.remove(item, liveness.id), new GatewayError('device-not-found'))
      if (started) work.enqueue(itemKey(item), item.deviceId, item.dueAt, item.createdAt)
      return item
    },

    /** The device's pending and failed items, earliest first. */
    list: (device: Device): Promise<ScheduleItem[]> => store.forDevice(device.id),

    /** How many stored items are pending, failed, and pending and already due (a scan, for metrics). */
    async backlog(now = Date.now()): Promise<{ pending: number; failed: number; due: number }> {
      const counts = { pending: 0, failed: 0, due: 0 }
      for await (const [, item] of store.all()) {
        if (item.state === 'failed') counts.failed++
        else if ((counts.pending++, Math.max(item.dueAt, item.retryAt ?? 0) <= now)) counts.due++
      }
      return counts
    },

    /** Start sending (call once the stored devices have been resumed). */
    start(): void {
      if (started) return
      started = true
      work.start().catch(err => logger.error({ err }, 'schedule scan failed'))
    },

    /** Scan now; with a device id (it just connected), that device's items waiting for a retry go at once. */
    wake(deviceId?: string): void {
      if (!started) return
      if (!deviceId) return void work.rescan()
      away.delete(deviceId)
      woken.set(deviceId, ++wakes)
      eager.add(deviceId)
      void work.refresh(deviceId).finally(() => eager.delete(deviceId))
    },

    /** Devices the scheduler remembers in memory (a wait for an away device, the last wake): one entry each, none of a deleted device. */
    get devicesRemembered(): number {
      return new Set([...away.keys(), ...woken.keys()]).size
    },

    /** Forget the items of a deleted device. */
    async removeDevice(device: Device): Promise<void> {
      work.forgetLane(device.id)
      away.delete(device.id)
      woken.delete(device.id)
      await store.removeDevice(device.id, liveness.id)
    },

    /** Stop the timer and wait for the sends under way. */
    async close(): Promise<void> {
      await work.close()
      // Outcomes the store did not take yet (their retry still waiting): recorded now, all at once (a store still down costs one time-out), else the next process sends them again.
      await Promise.all(
        [...outcomes].map(([key, record]) =>
          record().then(
            () => void outcomes.delete(key),
            err => logger.error({ err, key }, 'the outcome of a scheduled send could not be recorded at close: the next process may send it again'),
          ),
        ),
      )
    },
  }
}

// --- Internal helpers ---

/** A scheduled send stopped before the network: its claim is no longer this process's, or (`requeue`: released, tried again shortly) this instance was fenced at or since the claim or the store did not answer the check (`cause`). */
class NotHeld extends Error {
  constructor(
    message: string,
    readonly requeue: boolean,
    cause?: unknown,
  ) {
    super(message, { cause })
  }
}

/** The gateway's refusals that mean the send never started (not an attempt), and those never tried again (see isPermanent). */
const NEVER_STARTED = new Set<ErrorCode>(['shutting-down', 'send-queue-full', 'send-queue-timeout', 'not-connected'])
const PERMANENT = new Set(
  `invalid-input device-not-found message-not-found group-not-found invite-invalid card-image-invalid
   media-refused media-bad-status media-timeout media-unreachable media-too-large send-stalled`.split(/\s+/),
)

function neverStarted(err: unknown): boolean {
  return err instanceof TransportError ? err.code === 'not-connected' : err instanceof GatewayError && NEVER_STARTED.has(err.code)
}

/** Failures never tried again: the network refused the content or the target, or the send may have reached it (stalled, timed out: a retry could send it twice). */
function isPermanent(err: unknown): boolean {
  if (err instanceof TransportError) return ['invalid', 'not-found', 'not-admin', 'timeout'].includes(err.code)
  return err instanceof GatewayError && PERMANENT.has(err.code)
}

function describe(err: unknown): string {
  if (err instanceof TransportError) return `${err.code}: ${err.message}`
  return err instanceof Error ? err.message : String(err)
}
