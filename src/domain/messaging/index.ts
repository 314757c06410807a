import type { GatewayEvents } from '../../events.ts'
import type { Logger } from '../../logger.ts'
import type { MediaFetcher } from '../../ports/media.ts'
import type { Storage } from '../../ports/storage.ts'
import type { Transport } from '../../ports/transport.ts'
import type { KeyedLock } from '../../store/keyed-lock.ts'
import type { Accounts } from '../accounts.ts'
import type { Device, Devices } from '../devices.ts'
import type { Fence, Liveness } from '../instances.ts'
import type { MessageFeed } from '../message-feed.ts'
import { Groups } from './groups.ts'
import { MediaLoader } from './media-loader.ts'
import { Messenger } from './messenger.ts'
import { createOtps } from './otp.ts'
import { createScheduleStore } from './schedule-store.ts'
import { createScheduler } from './scheduler.ts'
import { SendQueues } from './send-queue.ts'

/** Messaging settings after defaults (the options and their defaults: src/options.ts). */
export interface MessagingSettings {
  mediaMaxBytes: number
  mediaTimeoutMs: number
  sendTimeoutMs: number
  minIntervalMs: number
  intervalJitterMs: number
  sendQueueLimit: number
  scheduleRetryMs: number[]
  schedulePollMs: number
  scheduleMaxWaitMs: number
  scheduleQuota: { maxPending: number; maxBytes: number }
  otpTtlMs: number
  otpMaxTries: number
  otpSecret: string
}

/** The messaging services: sending (queued), media, schedules, OTP and groups. */
export type Messaging = ReturnType<typeof createMessaging>

interface MessagingDeps {
  options: MessagingSettings
  storage: Storage
  lock: KeyedLock
  transport: Transport
  media: MediaFetcher
  devices: Devices
  accounts: Accounts
  feed: MessageFeed
  events: GatewayEvents
  logger: Logger
  /** This instance and who else is alive (claims of gone instances are void). */
  liveness: Liveness
  /** This instance's fence (undefined: none): a scheduled send begins only if its claim was made unfenced and no fence was raised since. */
  fence?: Fence
}

/** Build the messaging services; a device that connects gets its waiting scheduled items at once. */
export function createMessaging(deps: MessagingDeps) {
  const { options, logger } = deps
  const queues = new SendQueues(options)
  const messenger = new Messenger(deps.transport, queues, deps.feed, logger, deps.events)
  const store = createScheduleStore(deps.storage, deps.lock, options.scheduleQuota)
  const leaseMs = options.sendTimeoutMs + 60_000
  const timing = { retryMs: options.scheduleRetryMs, pollMs: options.schedulePollMs, leaseMs, maxWaitMs: options.scheduleMaxWaitMs }
  const scheduler = createScheduler(store, messenger, deps, timing, logger)
  const otps = createOtps(deps.storage, deps.lock, { ttlMs: options.otpTtlMs, maxTries: options.otpMaxTries, secret: options.otpSecret })
  const onStatus = ({ deviceId, status }: { deviceId: string; status: { connected: boolean } }) => {
    if (status.connected) scheduler.wake(deviceId)
  }
  deps.events.on('device-status', onStatus)
  return {
    messenger,
    media: new MediaLoader(deps.media, { maxBytes: options.mediaMaxBytes, timeoutMs: options.mediaTimeoutMs }),
    scheduler,
    otps,
    groups: new Groups(deps.transport, messenger),
    /** Start the scheduler (once the stored devices have been resumed). */
    start: () => scheduler.start(),
    /** Drop a deleted device's schedules and OTP codes. */
    async removeDevice(device: Device): Promise<void> {
      await scheduler.removeDevice(device)
      await otps.removeDevice(device)
    },
    /** Stop the scheduler and let queued sends finish. */
    async close(): Promise<void> {
      deps.events.off('device-status', onStatus)
      await scheduler.close()
      await queues.close()
    },
  }
}
