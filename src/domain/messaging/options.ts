import { randomBytes } from 'node:crypto'
/** Options of messaging: media, the per-device send queue, scheduling and OTP. Every one has a default. */
export interface MessagingOptions {
  /** Largest media file (URL download, base64 or upload), in bytes or with a unit (`'16mb'`). Default 16 MB. */
  mediaMaxBytes?: number | string
  /** Time allowed to download a media URL. Default 30 000 ms. */
  mediaTimeoutMs?: number
  /** A send answers within this time: still queued it is dropped, under way it is reported as stalled (504). Default 30 000 ms. */
  sendTimeoutMs?: number
  /** Pause between two sends of one device (pacing against bans). Default 0. */
  minIntervalMs?: number
  /** Random extra pause, 0 to this many ms, added to `minIntervalMs`. Default 0. */
  intervalJitterMs?: number
  /** Most sends waiting in one device's queue; more are answered 429. Default 1 000. */
  sendQueueLimit?: number
  /** Delays before retrying a failed scheduled send; after the last one it is marked failed. Default 1 min, 5 min, 15 min. */
  scheduleRetryMs?: number[]
  /** How often the scheduler re-reads the store (new items of other processes, retries). Default 15 000 ms. */
  schedulePollMs?: number
  /** How long a scheduled message due while its device is not connected waits for it before it is marked failed (default 24 h). */
  scheduleMaxWaitMs?: number
  /** How long an OTP code is valid. Default 300 000 ms (5 minutes). */
  otpTtlMs?: number
  /** Wrong codes allowed before an OTP is void. Default 5. */
  otpMaxTries?: number
  /** Key of the OTP code hashes (HMAC); set it (same value on every process) so a leaked store alone cannot reveal codes. */
  otpSecret?: string
}

/** Messaging options after defaults. */
export interface ResolvedMessagingOptions {
  mediaMaxBytes: number
  mediaTimeoutMs: number
  sendTimeoutMs: number
  minIntervalMs: number
  intervalJitterMs: number
  sendQueueLimit: number
  scheduleRetryMs: number[]
  schedulePollMs: number
  scheduleMaxWaitMs: number
  otpTtlMs: number
  otpMaxTries: number
  otpSecret: string
}

/** Fill in the defaults; throws a clear Error for an impossible value. */
export function resolveMessagingOptions(options: MessagingOptions, parseSize: (size: number | string) => number): ResolvedMessagingOptions {
  const resolved: ResolvedMessagingOptions = {
    mediaMaxBytes: parseSize(options.mediaMaxBytes ?? '16mb'),
    mediaTimeoutMs: options.mediaTimeoutMs ?? 30_000,
    sendTimeoutMs: options.sendTimeoutMs ?? 30_000,
    minIntervalMs: options.minIntervalMs ?? 0,
    intervalJitterMs: options.intervalJitterMs ?? 0,
    sendQueueLimit: options.sendQueueLimit ?? 1_000,
    scheduleRetryMs: options.scheduleRetryMs ?? [60_000, 300_000, 900_000],
    schedulePollMs: options.schedulePollMs ?? 15_000,
    scheduleMaxWaitMs: options.scheduleMaxWaitMs ?? 86_400_000,
    otpTtlMs: options.otpTtlMs ?? 300_000,
    otpMaxTries: options.otpMaxTries ?? 5,
    // Without a configured secret each process draws its own: a leaked store alone never reveals codes
    // (a hash of a 6-digit code under a known key falls to brute force), at the price of pending codes
    // not surviving a restart. Set otpSecret (the same on every process) to keep them.
    otpSecret: options.otpSecret ?? randomBytes(32).toString('base64'),
  }
  const positive = ['mediaMaxBytes', 'mediaTimeoutMs', 'sendTimeoutMs', 'sendQueueLimit', 'schedulePollMs', 'scheduleMaxWaitMs', 'otpTtlMs', 'otpMaxTries'] as const
  for (const name of positive) {
    if (!(Number.isFinite(resolved[name]) && resolved[name] > 0)) throw new Error(`createGateway: ${name} must be a positive number`)
  }
  for (const name of ['minIntervalMs', 'intervalJitterMs'] as const) {
    if (!(Number.isFinite(resolved[name]) && resolved[name] >= 0)) throw new Error(`createGateway: ${name} must be a number >= 0`)
  }
  if (!Array.isArray(resolved.scheduleRetryMs) || !resolved.scheduleRetryMs.every(ms => Number.isFinite(ms) && ms >= 0)) {
    throw new Error('createGateway: scheduleRetryMs must be a list of delays >= 0')
  }
  if (typeof resolved.otpSecret !== 'string' || resolved.otpSecret === '') throw new Error('createGateway: otpSecret must be a non-empty string')
  return resolved
}
