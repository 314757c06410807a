import { randomUUID } from 'node:crypto'
import { GatewayError } from '../errors.ts'
import { hashKey, hashPassword, randomKey, safeEqual, uniqueTag } from '../security/keys.ts'
import { Collection } from '../store/collection.ts'
import { UniqueIndex } from '../store/unique-index.ts'
import type { CacheEpoch } from '../store/cache-epoch.ts'
import type { KeyedLock } from '../store/keyed-lock.ts'
import type { Storage } from '../ports/storage.ts'
import { addDays, dateInZone } from './clock.ts'

/** A subscription plan: its display name and how many days an account lasts. */
export interface Plan {
  name: string
  days: number
}

/** A user account as stored (no password or key in clear). */
export interface Account {
  id: string
  name: string
  email: string
  phone: string
  planId: string
  planName: string
  /** Last valid day, YYYY-MM-DD in the gateway's time zone. */
  expiresOn: string
  passwordHash: string
  authkeyHash: string
  createdAt: number
  /** Suspended by the host (its key is refused until resumed). */
  suspended?: boolean
  /** A tag of the host's last change (renew, suspend, rotateKey): tells that change's record, stored though its write's answer was lost. */
  revision?: string
}

/** The cause of an `unauthenticated` refusal of an account's own key while the account is suspended or expired (a real key, not a guess). */
const INACTIVE_ACCOUNT = new Error('the account is suspended or expired')

/** Whether `err` refused an account's own key because the account is suspended or expired (not an unknown key). */
export function refusedInactive(err: unknown): boolean {
  return err instanceof Error && err.cause === INACTIVE_ACCOUNT
}

/** Accounts: registration and authkey authentication. Keys are stored and looked up by hash only. */
export type Accounts = ReturnType<typeof createAccounts>

/** The accounts of a store (`cacheTtlMs`: how long records read stay cached in this process; `epoch` drops them everywhere). */
export function createAccounts(storage: Storage, lock: KeyedLock, plans: Record<string, Plan>, timeZone: string, cacheTtlMs = 0, epoch?: CacheEpoch) {
  const cache = { cache: { ttlMs: cacheTtlMs, maxEntries: 10_000, epoch } }
  const records = new Collection<Account>(storage, lock, 'account', cache)
  const byEmail = new UniqueIndex<{ accountId: string }>(storage, lock, 'account-email')
  const byKey = new Collection<{ accountId: string }>(storage, lock, 'authkey', cache)
  const planOf = (id: string, details?: { detail: string }): Plan => {
    const plan = Object.hasOwn(plans, id) ? plans[id] : undefined
    if (!plan) throw new GatewayError('invalid-input', details)
    return plan
  }
  // The index entry of `email`, under each form an address was indexed by (older first, so an older entry is found by its own form): in NFC
  // with its invisible characters, before those were dropped; as it came, before addresses were NFC-normalised; now. One read for most.
  const emailEntry = async (email: string) => {
    for (const form of new Set([composedEmail(email), email.trim().toLowerCase(), normalEmail(email)])) {
      const entry = await byEmail.get(hashKey(form))
      if (entry) return entry
    }
    return undefined
  }
  const byEmailAddress = async (email: string): Promise<Account | undefined> => {
    const entry = await emailEntry(email)
    return entry && records.load(entry.accountId)
  }
  // Change the account of `email` (compare-and-set), then drop every process's cached copy; `account-not-found` when there is none.
  // Once the change is stored it is answered, whatever fails after (a host retries a rejected renew: stored twice, it gives a period away).
  const change = async (email: string, next: (account: Account) => Account | Promise<Account>): Promise<Account> => {
    const found = await byEmailAddress(email)
    if (!found) throw new GatewayError('account-not-found')
    const revision = uniqueTag()
    let updated: Account | undefined
    try {
      updated = await records.update(found.id, async current => (current ? { ...(await next(current)), revision } : undefined))
    } catch (err) {
      // The write may be stored all the same (its answer lost): its revision tells.
      const stored = await records.load(found.id).catch(() => undefined)
      if (stored?.revision !== revision) throw err
      updated = stored
    }
    if (!updated) throw new GatewayError('account-not-found')
    await epoch?.bump().catch(() => undefined) // else other processes keep their cached copy for its ttl (cacheTtlMs)
    return updated
  }
  const wellFormed = (authkey: unknown): authkey is string => typeof authkey === 'string' && authkey.length > 0 && authkey.length <= 256
  const active = (account: Account | undefined): account is Account => !!account && !account.suspended && account.expiresOn >= dateInZone(timeZone)
  const valid = (account: Account | undefined, keyHash: string): Account | undefined =>
    active(account) && safeEqual(account.authkeyHash, keyHash) ? account : undefined
  const cached = (authkey: unknown): Account | undefined => {
    const keyHash = wellFormed(authkey) ? hashKey(authkey) : ''
    const entry = keyHash ? byKey.peek(keyHash) : undefined
    return entry && valid(records.peek(entry.accountId), keyHash)
  }
  // The account of `authkey` when it is valid; `known`: the key is an account's own (suspended or expired when `account` is undefined).
  const lookup = async (authkey: unknown): Promise<{ account?: Account; known: boolean }> => {
    if (!wellFormed(authkey)) return { known: false }
    const keyHash = hashKey(authkey)
    const entry = await byKey.get(keyHash)
    const account = entry && (await records.get(entry.accountId))
    const known = !!account && safeEqual(account.authkeyHash, keyHash)
    return known && active(account) ? { account, known } : { known }
  }
  const authenticate = async (authkey: unknown): Promise<Account | undefined> => (await lookup(authkey)).account
  return {
    /** Create an account and its authkey (returned once, in clear); `email-taken`, or `invalid-input` for an unknown plan. Once the e-mail is claimed, the key is answered. */
    async register(input: { name: string; email: string; password: string; phone: string; planId: string }): Promise<{ account: Account; authkey: string }> {
      const plan = planOf(input.planId)
      const email = normalEmail(input.email)
      const emailId = hashKey(email)
      if (await emailEntry(input.email)) throw new GatewayError('email-taken')
      const authkey = randomKey(24)
      const account: Account = {
        id: randomUUID(),
        name: input.name.trim(),
        email,
        phone: input.phone,
        planId: input.planId,
        planName: plan.name,
        expiresOn: addDays(dateInZone(timeZone), plan.days), // calendar days: 24-hour days would move it by one across a daylight-saving change
        passwordHash: await hashPassword(input.password),
        authkeyHash: hashKey(authkey),
        createdAt: Date.now(),
      }
      // The e-mail is claimed last, atomically: of concurrent registrations one wins, the others take back what they wrote.
      await records.put(account.id, account)
      await byKey.put(account.authkeyHash, { accountId: account.id })
      const claimed = await byEmail.claim(emailId, { accountId: account.id }).catch(async err => {
        // The claim may be stored all the same (its answer lost): then the e-mail is this account's, and its key must be answered.
        if ((await byEmail.load(emailId).catch(() => undefined))?.accountId !== account.id) throw err
        return true
      })
      if (!claimed) {
        // Best effort: what a failed clean-up leaves is never found (no e-mail names it) nor authenticated (its key was never answered).
        await byKey.remove(account.authkeyHash).catch(() => undefined)
        await records.remove(account.id).catch(() => undefined)
        throw new GatewayError('email-taken')
      }
      return { account, authkey }
    },
    /** The account of a valid, unexpired authkey, or undefined (from the record cache when it holds both records). */
    authenticate,
    /** The account of a valid authkey from this process's cached records alone (a send's path, without a promise); undefined: ask `require`. */
    cached,
    /** The account of an authkey; `unauthenticated` for an unknown one, or for the key of a suspended or expired account (then caused by INACTIVE_ACCOUNT). */
    async require(authkey: unknown): Promise<Account> {
      const { account, known } = await lookup(authkey)
      if (!account) throw new GatewayError('unauthenticated', known ? { cause: INACTIVE_ACCOUNT } : {})
      return account
    },
    /** Whether the account is there, not suspended and its `expiresOn` not past (what a valid key needs; work it set up stops without it). */
    active,
    /** An account by id (the id comes from a record of that account). */
    get: (id: string): Promise<Account | undefined> => records.get(id),
    /** The account if this process has it cached, without a store read (undefined: not cached, or none). */
    peek: (id: string): Account | undefined => records.peek(id),
    /** The account registered with `email`, or undefined. */
    byEmailAddress,
    /** Renew the account's plan (its own, or `planId`) for the plan's days from its last day, or from today when that has passed. */
    renew: (email: string, planId?: string): Promise<Account> =>
      change(email, account => {
        const id = planId ?? account.planId
        const plan = planOf(id, { detail: `unknown plan ${JSON.stringify(id)}` })
        const today = dateInZone(timeZone)
        const from = account.expiresOn >= today ? addDays(account.expiresOn, 1) : today
        return { ...account, planId: id, planName: plan.name, expiresOn: addDays(from, plan.days - 1) }
      }),
    /** Suspend the account (its key is refused everywhere at once) or resume it. */
    suspend: (email: string, suspended: boolean): Promise<Account> => change(email, account => ({ ...account, suspended })),
    /**
     * Give the account a new authkey (answered once, in clear); the old one stops working everywhere within the cache epoch's poll.
     * Once the account's new key hash is stored, the new key is answered whatever fails after (the old key is refused by that hash);
     * a rejection means the old key still works, unless the store could not even be read back (then rotate again).
     */
    async rotateKey(email: string): Promise<{ account: Account; authkey: string }> {
      const authkey = randomKey(24)
      const authkeyHash = hashKey(authkey)
      let old: Account | undefined
      let account: Account
      try {
        account = await change(email, async current => {
          old = current
          await byKey.put(authkeyHash, { accountId: current.id })
          return { ...current, authkeyHash }
        })
      } catch (err) {
        // The new hash may be stored all the same (the write's answer lost, or the epoch bump failed after it): the rotation took place.
        const stored = old && (await records.load(old.id).catch(() => undefined))
        if (stored?.authkeyHash !== authkeyHash) throw err
        account = stored
        await epoch?.bump().catch(() => undefined) // else other processes keep their cached copy for its ttl (cacheTtlMs)
      }
      // Left behind, the old entry is refused all the same (the account's own hash decides).
      if (old && old.authkeyHash !== authkeyHash) await byKey.remove(old.authkeyHash).catch(() => undefined)
      return { account, authkey }
    },
  }
}

// --- Internal helpers ---

/**
 * An e-mail address as accounts are found by it: trimmed, lower case, in Unicode's composed form (NFC), so that one address typed as
 * `é` or as `e` + a combining accent (macOS, some forms) is one account, as canonically equivalent texts are the same text; without the
 * characters that do not show (Default_Ignorable_Code_Point: zero-width space and joiners, soft hyphen, direction marks, word joiner,
 * BOM), which a paste leaves in an address its user sees as the one without them.
 */
export function normalEmail(email: string): string {
  return composedEmail(email).replace(INVISIBLE, '')
}

const INVISIBLE = /\p{Default_Ignorable_Code_Point}/gu

/** An e-mail address as accounts were indexed before invisible characters were dropped (NFC, trimmed, lower case). */
function composedEmail(email: string): string {
  return email.normalize('NFC').trim().toLowerCase()
}
