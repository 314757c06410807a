import { createAccounts, type Accounts, type Account, type Plan } from './domain/accounts.ts'
import { resolvePlans, resolveTimeZone } from './resolve-options.ts'
import { silentLogger } from './logger.ts'
import type { Storage } from './ports/storage.ts'
import { cacheEpoch } from './store/cache-epoch.ts'
import { guardStorage } from './store/guarded-storage.ts'
import { KeyedLock } from './store/keyed-lock.ts'

/** An account as the host's account API shows it (never its password or key). */
export interface AccountSummary {
  email: string
  name: string
  phone: string
  planId: string
  planName: string
  /** Last valid day, YYYY-MM-DD in the gateway's time zone (the API's `expiracao`). */
  expiresOn: string
  suspended: boolean
  createdAt: number
}

/**
 * What the host app (which owns billing) can do with accounts, beside operation 1: renew a plan,
 * give an account a new authkey, suspend and resume it. Every change reaches every gateway process
 * on the store at once (within 100 ms). Unknown e-mail: GatewayError `account-not-found`; unknown
 * plan: `invalid-input`. A call that rejects changed nothing (retry it); once a change is stored it
 * is answered, even when the store then fails (others may then see it only after `cacheTtlMs`).
 */
export interface AccountAdmin {
  /** The account registered with `email`, or undefined. */
  get(email: string): Promise<AccountSummary | undefined>
  /** A new `expiracao`: the plan's days (the account's plan, or `planId`) from its last day, or from today when that has passed. */
  renew(email: string, planId?: string): Promise<AccountSummary>
  /** A new authkey, answered once; the old one stops working at once, on every process. */
  rotateKey(email: string): Promise<{ account: AccountSummary; authkey: string }>
  /** Refuse the account's key (every operation answers as for an invalid authkey) until resumed. */
  suspend(email: string): Promise<AccountSummary>
  /** Accept the account's key again. */
  resume(email: string): Promise<AccountSummary>
}

/** The account API over the gateway's accounts (`gateway.accounts`). */
export function accountAdminOf(accounts: Accounts): AccountAdmin {
  return {
    get: async email => summaryOf(await accounts.byEmailAddress(email)),
    renew: async (email, planId) => summaryOf(await accounts.renew(email, planId))!,
    rotateKey: async email => {
      const { account, authkey } = await accounts.rotateKey(email)
      return { account: summaryOf(account)!, authkey }
    },
    suspend: async email => summaryOf(await accounts.suspend(email, true))!,
    resume: async email => summaryOf(await accounts.suspend(email, false))!,
  }
}

/**
 * The account API straight over a store, without a running gateway: for an operator's command next
 * to running gateways (`npm run accounts`). `plans` and `timeZone` as the gateways' options.
 */
export function accountAdmin(options: { storage: Storage; plans?: Record<string, Plan>; timeZone?: string }): AccountAdmin {
  const storage = guardStorage(options.storage)
  const epoch = cacheEpoch(storage, 60_000, silentLogger)
  // null (a JSON config's "not set") as not given, as createGateway takes it
  const plans = resolvePlans(options.plans ?? undefined)
  return accountAdminOf(createAccounts(storage, new KeyedLock(), plans, resolveTimeZone(options.timeZone ?? undefined), 0, epoch))
}

// --- Internal helpers ---

function summaryOf(account: Account | undefined): AccountSummary | undefined {
  if (!account) return undefined
  const { email, name, phone, planId, planName, expiresOn, createdAt } = account
  return { email, name, phone, planId, planName, expiresOn, suspended: account.suspended === true, createdAt }
}
