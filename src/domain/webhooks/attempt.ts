import type { GatewayEvents } from '../../events.ts'
import type { Logger } from '../../logger.ts'
import type { WebhookDelivery, WebhookSender } from '../../ports/webhooks.ts'
import { Deadlines, invoke } from '../../store/deadlines.ts'
import { putBounded } from '../../store/bounded-map.ts'
import type { Devices } from '../devices.ts'
import { fenceMark, unfencedSince, type Fence, type Liveness } from '../instances.ts'
import type { WebhookSettings } from './config.ts'
import { ShutdownAbort } from '../due-work.ts'
import { claimedUntil } from '../claims.ts'
import type { DeadLetterDetails, DeadLetterReason, OutboxRecord, OutboxStore } from './outbox-store.ts'
import { parseRetryAfter, retryDelay } from './retry.ts'
import { defined } from './payload.ts'
import { freshWebhookHeaders, webhookHeaders } from './signer.ts'
import { loggableUrl } from '../../security/url-policy.ts'
import { pausedDevices, PAUSED_TEXT, type AccountCheck } from './paused.ts'

/** What delivering needs from the gateway. */
export interface DeliveryDependencies {
  store: OutboxStore
  devices: Devices
  sender: WebhookSender
  events: GatewayEvents
  logger: Logger
  settings: WebhookSettings
  liveness: Liveness
  /** The accounts whose suspension or expiry holds their devices' events (undefined: none is held). */
  accounts?: AccountCheck
  /** This instance's fence (undefined: none): a POST begins only while it is down and was not raised since the attempt's claim. */
  fence?: Fence
}

/** A fenced attempt's event is looked at again this much later (by this process while it still holds it; else by its new holder). */
const FENCED_RETRY_MS = 1_000

/** What one POST got: a status (and Retry-After), or an error when there was no answer (`notBegun`: the sender never began it, the gateway stopping; `fenced`: never begun, this instance fenced since the claim). */
type Outcome = { status?: number; retryAfter?: string; error?: string; notBegun?: boolean; fenced?: boolean }

/** What an attempt asks of the delivery loop: whether the loop is closing (no POST starts then), and to read a device's records again (its held events, once its account is active). */
interface DeliveryLoop {
  readonly closingSignal: AbortSignal
  refresh(lane: string): Promise<void>
}

/** One delivery attempt of an outbox record: hold it while its account is paused, claim it, check its age and URL, sign, POST once, record the outcome; emits `delivery` and `delivery-failed`; `wake`: an account changed. */
export function createDeliveryAttempts(deps: DeliveryDependencies, loopOf: () => DeliveryLoop) {
  // Gives up on a sender that never settles (it should time out by itself first).
  const hangGuard = new Deadlines(deps.settings.timeoutMs + 1_000)
  // At shutdown every attempt stops waiting: one listener on the engine's signal (one for its life), not one per attempt (that cost ~3% of an event's CPU).
  const watched = new WeakSet<AbortSignal>()
  /** Records a 410's sweep left to this process's attempt under way (by key), with the URL that answered 410: that attempt ends them as `gone` too. */
  const goneWhileRunning = new Map<string, string>()
  /** Keys whose attempt is under way here (a 410 sweep leaves those to it): until its last look at goneWhileRunning, not its run's end in the loop (a few microtasks later, when an entry would outlive it). */
  const underWay = new Set<string>()
  const paused = pausedDevices(deps, deviceId => loopOf().refresh(deviceId))
  /** Attempt the record under `key` of device `deviceId`: when to look at it again (undefined: done); `shutdown` aborts with a ShutdownAbort. */
  async function run(key: string, deviceId: string, shutdown: AbortSignal): Promise<number | undefined> {
    underWay.add(key)
    try {
      return await attempt(key, deviceId, shutdown)
    } finally {
      underWay.delete(key)
      if (goneWhileRunning.size > 0) goneWhileRunning.delete(key)
    }
  }
  async function attempt(key: string, deviceId: string, shutdown: AbortSignal): Promise<number | undefined> {
    const { store, devices, settings } = deps
    const now = Date.now()
    // Its account suspended or expired: the event waits as stored (not an attempt), until that account is active again or it is too old.
    const isPaused = paused.paused(deviceId) // no promise when the device and its account are cached
    const waiting = (isPaused === true || (isPaused !== false && (await isPaused))) && (await store.get(key))
    if (waiting && now - waiting.createdAt < settings.maxAgeMs) return paused.hold(waiting, now, settings.maxAgeMs)
    // Read before the claim is written: a fence raised from then on (and lifted or not) may have let another process judge this one gone and take the event over.
    // Fenced already (back from a pause, its heartbeat not yet in the store): the claim may land before this instance is registered again, and be dropped as a gone one's; no POST then (NaN matches no count).
    const fences = deps.fence && fenceMark(deps.fence)
    // The claim lasts twice the attempt time-out plus a margin, so a live attempt never loses it.
    const record = await store.claim(key, deps.liveness, now, settings.timeoutMs * 2 + 5_000)
    if (typeof record !== 'object') return record
    const device = await devices.get(record.deviceId)
    if (!device) {
      deps.logger.debug({ key }, 'webhook event of a deleted device dropped')
      await store.complete(key)
      return undefined
    }
    // Buried only while the store still holds this attempt's claim (buryOwn): taken over since (this process stalled), the event is the new holder's.
    if (now - record.createdAt >= settings.maxAgeMs)
      return buryOwn(key, record, 'max-age', { url: device.webhookUrl, ...(waiting ? { lastError: PAUSED_TEXT } : {}) })
    const url = device.webhookUrl
    if (!url) {
      const goneUrl = goneWhileRunning.get(key)
      return goneUrl === undefined ? buryOwn(key, record, 'no-webhook', {}) : buryOwn(key, record, 'gone', { url: goneUrl })
    }

    // Closing since this attempt began (its claim and reads took a while): no POST now, for one the grace would cut short could have reached its receiver and be sent again.
    if (loopOf().closingSignal.aborted) {
      await store.retryLater(key, record.lease?.token, { dueAt: now, counted: false })
      return undefined
    }
    const attempt = record.attempts + 1
    const { status, retryAfter, error, notBegun, fenced } = await send(url, device.webhookSecret, record, shutdown, fences)
    const base = { deviceId: record.deviceId, eventId: record.id, url, attempt }
    // A 2xx counts even when it arrives as the gateway stops: retrying it would deliver it twice.
    if (status !== undefined && status >= 200 && status < 300) {
      await store.complete(key)
      deps.logger.debug({ key, status }, 'webhook delivered')
      deps.events.emit('delivery', { ...base, status })
      return undefined
    }
    // Fenced since the claim, before the POST began (a pause, a long GC, the store away: another process may have delivered it since): not an attempt; its holder's to send.
    if (fenced && !shutdown.aborted) {
      const dueAt = Date.now() + FENCED_RETRY_MS
      await store.retryLater(key, record.lease?.token, { dueAt, counted: false })
      deps.logger.warn(
        { key },
        "webhook POST not begun: this instance is fenced (its heartbeat was late since the claim), the event may be another process's now",
      )
      return dueAt
    }
    // Stopped, or closing before the sender began the POST (it waited in the sender's queue): not an attempt, sent after the restart.
    if (shutdown.reason instanceof ShutdownAbort || notBegun || fenced) {
      await store.retryLater(key, record.lease?.token, { dueAt: now, counted: false })
      return undefined
    }
    if (status === 410) return gone(key, record, url)

    const failedAt = Date.now()
    const failure = { lastStatus: status, lastError: error }
    // Its receiver's 410 to another event switched the webhook off meanwhile: the sweep left this one to this attempt (while it holds its claim: taken over since, the event may have been buried and redriven, to a new URL).
    if (goneWhileRunning.has(key)) return buryOwn(key, record, 'gone', { url, ...failure, attempted: true })
    // Too old by the record this attempt claimed: only while the store still holds that claim (taken over since, the event may have been buried and redriven fresh).
    if (failedAt - record.createdAt >= settings.maxAgeMs) return buryOwn(key, record, 'max-age', { url, ...failure, attempted: true })
    const delay = parseRetryAfter(retryAfter, failedAt) ?? retryDelay(settings.retryMs, attempt)
    const dueAt = Math.min(failedAt + delay, record.createdAt + settings.maxAgeMs)
    await store.retryLater(key, record.lease?.token, { dueAt, counted: true, ...failure })
    deps.logger.debug({ ...base, url: loggableUrl(url), status, error, retryInMs: dueAt - failedAt }, 'webhook attempt failed')
    deps.events.emit('delivery-failed', { ...base, ...defined({ status, error }), final: false })
    return dueAt
  }
  /** POST once through the sender, within the time-out, unless this instance was fenced since `fences` (checked here and by the sender right before it begins); never throws. */
  async function send(url: string, secret: string, record: OutboxRecord, shutdown: AbortSignal, fences: number | undefined): Promise<Outcome> {
    if (shutdown.aborted) return { error: 'the gateway is stopping' }
    const fence = deps.fence
    let refused = false
    // No store call: the fence is judged by this process's own clock, before anyone may judge it gone (docs/scaling.md).
    const mayBegin = fence && (() => !(refused ||= !unfencedSince(fence, fences ?? NaN)))
    if (mayBegin && !mayBegin()) return { error: FENCED_TEXT, fenced: true }
    const headers = webhookHeaders(secret, record.id, record.body)
    const timeoutMs = deps.settings.timeoutMs
    const closing = loopOf().closingSignal
    let timedOut = false
    try {
      const deadline = Date.now() + timeoutMs
      // invoke: a JavaScript sender may answer with a plain value (or a thenable), not a native promise.
      const delivery: WebhookDelivery = { url, headers, body: record.body, deviceId: record.deviceId, signal: shutdown, closing, deadline }
      if (mayBegin) delivery.mayBegin = mayBegin
      // Signed again when the POST begins, after the sender's queue (up to the time-out): before, a delivery that waited there over 5 minutes was refused by its receiver.
      delivery.freshHeaders = () => (delivery.headers = freshWebhookHeaders(delivery.headers, secret, record.id, record.body))
      const sending = invoke(() => deps.sender.send(delivery))
      if (!watched.has(shutdown)) {
        watched.add(shutdown)
        shutdown.addEventListener('abort', () => hangGuard.expireAll(), { once: true })
      }
      const response = await hangGuard.run(sending, () =>
        shutdown.aborted ? shutdown.reason : ((timedOut = true), new Error(`no answer within ${timeoutMs} ms`)),
      )
      if (!Number.isInteger(response?.status)) return { error: 'the webhook sender returned no status' }
      return { status: response.status, retryAfter: response.retryAfter?.toString() }
    } catch (err) {
      // The sender heeded mayBegin: nothing was POSTed.
      if (refused) return { error: FENCED_TEXT, fenced: true }
      // Thrown by the sender once the stop began: a POST it had not begun and must not begin now (docs/api.md: it throws, whatever it throws; before, only the closing reason was taken so, and a plain Error was counted a failed attempt, its retry pushed past the restart).
      const notBegun = err instanceof ShutdownAbort || (closing.aborted && !timedOut)
      return { error: err instanceof Error ? err.message : String(err), ...(notBegun ? { notBegun: true } : {}) }
    }
  }
  /**
   * The receiver answered 410 Gone: dead-letter the event (only while the store still holds this attempt's claim: taken over since, the
   * event may have been buried and redriven, to a new URL), clear the device's webhook URL, dead-letter its other pending events (those
   * this process is attempting: when their attempt ends undelivered); when to attempt the event again, as buryOwn.
   */
  async function gone(key: string, record: OutboxRecord, url: string): Promise<number | undefined> {
    const { store, devices, logger } = deps
    const again = await buryOwn(key, record, 'gone', { url, lastStatus: 410, attempted: true })
    const after = await devices.update(record.deviceId, device => void (device.webhookUrl === url && (device.webhookUrl = undefined)))
    if (after?.webhookUrl) return again // a URL set since this attempt began: the pending events are that receiver's
    logger.warn({ deviceId: record.deviceId, url: loggableUrl(url) }, 'webhook receiver answered 410 Gone: the device webhook is switched off')
    const others: [string, OutboxRecord][] = []
    for await (const entry of store.ofDevice(record.deviceId)) {
      if (!underWay.has(entry[0])) others.push(entry)
      else if (entry[0] !== key) putBounded(goneWhileRunning, entry[0], url, 10_000) // its attempt buries it as gone unless it delivers
    }
    // One another live process is attempting now is its to finish: delivered, or buried by it (its receiver's 410, or no URL left); so is
    // one whose attempt began here since the listing (before, it was buried as gone while its POST to a URL set meanwhile delivered it).
    const attemptedElsewhere = (other: OutboxRecord) => other.lease?.owner !== deps.liveness.id && claimedUntil(other.lease, deps.liveness) !== undefined
    for (const [otherKey, other] of others) await bury(otherKey, other, 'gone', { url }, current => underWay.has(otherKey) || attemptedElsewhere(current))
    return again
  }
  /**
   * Bury the attempt's own record, only while the store still holds its claim and it was not redriven since: undefined, or now when a
   * redrive since left the event pending under this claim: attempted again at once, here (a redrive in another process schedules it
   * there only for when this claim runs out: before, up to 35 s later).
   */
  async function buryOwn(key: string, record: OutboxRecord, reason: DeadLetterReason, details: DeadLetterDetails): Promise<number | undefined> {
    let redriven = false
    const lost = (current: OutboxRecord): boolean => {
      const claimed = current.lease?.token === record.lease?.token
      return (redriven = claimed && current.redrive !== record.redrive) || !claimed
    }
    await bury(key, record, reason, details, lost)
    return redriven ? Date.now() : undefined
  }
  /** Move a record to the dead letters (unless `spare` names it) and tell the host (`delivery-failed` with `final`). */
  async function bury(
    key: string,
    record: OutboxRecord,
    reason: DeadLetterReason,
    details: DeadLetterDetails,
    spare?: (record: OutboxRecord) => boolean,
  ): Promise<undefined> {
    const letter = await deps.store.deadLetter(key, reason, Date.now(), details, spare, deviceGone)
    if (!letter) return undefined
    deps.logger.warn({ deviceId: record.deviceId, eventId: record.id, reason, attempts: letter.attempts }, 'webhook event moved to the dead letters')
    deps.events.emit('delivery-failed', {
      deviceId: record.deviceId,
      eventId: record.id,
      url: details.url ?? '',
      attempt: letter.attempts,
      ...defined({ status: details.lastStatus, error: details.lastError ?? reasonText[reason] }),
      final: true,
      reason,
      attempted: details.attempted === true,
    })
    return undefined
  }
  /** Whether a device is deleted or being deleted, as stored now (its removal hook deletes its dead letters). */
  const deviceGone = async (deviceId: string): Promise<boolean> => {
    const device = await deps.devices.load(deviceId)
    return !device || device.removing === true
  }
  return { run, wake: paused.wake, forget: paused.forget }
}

// --- Internal helpers ---

const FENCED_TEXT = 'not begun: this instance was fenced (its heartbeat late) since the claim'

const reasonText: Record<DeadLetterReason, string> = {
  'max-age': 'older than the maximum age',
  gone: 'the receiver answered 410 Gone',
  'no-webhook': 'the device has no webhook URL',
}
