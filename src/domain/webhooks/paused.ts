import type { Logger } from '../../logger.ts'
import { putBounded } from '../../store/bounded-map.ts'
import type { Account, Accounts } from '../accounts.ts'
import type { Devices } from '../devices.ts'
import type { OutboxRecord } from './outbox-store.ts'

/** How long a held event waits before its account is looked at again, unless an account change (a cache epoch bump) wakes it first. */
export const PAUSED_RECHECK_MS = 60_000

/** The `lastError` of an event dead-lettered at `webhookMaxAgeMs` while its account was suspended or expired (never attempted since). */
export const PAUSED_TEXT = 'the account was suspended or expired'

/** What the pause reads of the accounts: their record (from this process's cache when it holds it) and whether it is active. */
export type AccountCheck = Pick<Accounts, 'get' | 'peek' | 'active'>

/**
 * The devices whose webhook events are held because their account is suspended or expired
 * (docs/api.md, "Delivery"): an event of one is not attempted (no claim, no write: it stays as
 * stored), looked at again after PAUSED_RECHECK_MS, and its device's held events are put back in
 * line, in their order, as soon as the account is active again: when an attempt finds it so, or
 * when `wake` (every account change, in any process, through the cache epoch) reads it so.
 * Without `accounts` nothing is held.
 */
export function pausedDevices(deps: { accounts?: AccountCheck; devices: Devices; logger: Logger }, refresh: (deviceId: string) => Promise<void>) {
  const { accounts, devices, logger } = deps
  /** Devices with held events in this process, with their account's id. */
  const held = new Map<string, string>()
  let waking: Promise<void> | undefined
  let wakeAgain = false
  const release = (deviceId: string): void => {
    if (held.delete(deviceId)) void refresh(deviceId)
  }
  function wake(): void {
    if (!accounts || held.size === 0) return
    if (waking) return void (wakeAgain = true)
    waking = (async () => {
      for (const [deviceId, accountId] of [...held]) {
        const account = await accounts.get(accountId).catch(() => undefined) // the store away: the recheck will tell
        if (accounts.active(account) && held.get(deviceId) === accountId) release(deviceId)
      }
    })()
      .catch(err => logger.warn({ err }, 'held webhook events not woken; their recheck will send them'))
      .finally(() => {
        waking = undefined
        if (wakeAgain) ((wakeAgain = false), wake())
      })
  }
  /** Paused when `account` is not active; active, the device's other held events go back in line (it was active again before a wake saw it). */
  const settle = (deviceId: string, account: Account | undefined): boolean => {
    if (!accounts!.active(account)) return true
    if (held.size > 0) release(deviceId)
    return false
  }
  return {
    /**
     * Whether the device's account is suspended or expired (a deleted device is not paused: its attempt drops the event): at once from
     * this process's cached records when it holds both (an event's usual case: no promise), else after reading them.
     */
    paused(deviceId: string): boolean | Promise<boolean> {
      if (!accounts) return false
      const device = devices.peek(deviceId)
      const account = device && accounts.peek(device.accountId)
      if (account) return settle(deviceId, account)
      return devices.get(deviceId).then(found => (found ? accounts.get(found.accountId).then(read => settle(deviceId, read)) : false))
    },
    /** Hold the event `record` of a paused device: when to look at it again (not before it is due, nor after its maximum age). */
    hold(record: OutboxRecord, now: number, maxAgeMs: number): number {
      putBounded(held, record.deviceId, record.accountId, 10_000) // one evicted waits for its recheck
      logger.debug({ key: `${record.deviceId}:${record.id}`, deviceId: record.deviceId }, 'webhook event held: its account is suspended or expired')
      return Math.min(Math.max(now + PAUSED_RECHECK_MS, record.dueAt), record.createdAt + maxAgeMs)
    },
    /** Read the accounts of the held devices again (an account changed somewhere): the devices of active ones are released; asked while reading, once more after. */
    wake,
    /** Forget a deleted device. */
    forget: (deviceId: string): void => void held.delete(deviceId),
  }
}
