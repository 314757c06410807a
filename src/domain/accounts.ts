import { randomUUID } from 'node:crypto'
import { GatewayError } from '../errors.ts'
import { hashKey, hashPassword, randomKey, safeEqual } from '../security/keys.ts'
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
}

/** Accounts: registration and authkey authentication. Keys are stored and looked up by hash only. */
export class Accounts {
  private readonly accounts: Collection<Account>
  private readonly byEmail: UniqueIndex<{ accountId: string }>
  private readonly byKey: Collection<{ accountId: string }>

  constructor(
    storage: Storage,
    lock: KeyedLock,
    private readonly plans: Record<string, Plan>,
    private readonly timeZone: string,
    cacheTtlMs = 0,
    private readonly epoch?: CacheEpoch,
  ) {
    const cache = { cache: { ttlMs: cacheTtlMs, maxEntries: 10_000, epoch } }
    this.accounts = new Collection(storage, lock, 'account', cache)
    this.byEmail = new UniqueIndex(storage, lock, 'account-email')
    this.byKey = new Collection(storage, lock, 'authkey', cache)
  }

  /** Create an account and its authkey (returned once, in clear); `email-taken`, or `invalid-input` for an unknown plan. */
  async register(input: { name: string; email: string; password: string; phone: string; planId: string }): Promise<{ account: Account; authkey: string }> {
    const plan = this.plan(input.planId)
    const email = input.email.trim().toLowerCase()
    const emailId = hashKey(email)
    if (await this.byEmail.get(emailId)) throw new GatewayError('email-taken')
    const authkey = randomKey(24)
    const account: Account = {
      id: randomUUID(),
      name: input.name.trim(),
      email,
      phone: input.phone,
      planId: input.planId,
      planName: plan.name,
      expiresOn: dateInZone(this.timeZone, plan.days),
      passwordHash: await hashPassword(input.password),
      authkeyHash: hashKey(authkey),
      createdAt: Date.now(),
    }
    // The e-mail is claimed last, atomically: of concurrent registrations one wins, the others take back what they wrote.
    await this.accounts.put(account.id, account)
    await this.byKey.put(account.authkeyHash, { accountId: account.id })
    if (!(await this.byEmail.claim(emailId, { accountId: account.id }))) {
      await this.byKey.remove(account.authkeyHash)
      await this.accounts.remove(account.id)
      throw new GatewayError('email-taken')
    }
    return { account, authkey }
  }

  /** The account of a valid, unexpired authkey, or undefined (from the record cache when it holds both records). */
  async authenticate(authkey: unknown): Promise<Account | undefined> {
    if (typeof authkey !== 'string' || authkey.length === 0 || authkey.length > 256) return undefined
    const keyHash = hashKey(authkey)
    const entry = await this.byKey.get(keyHash)
    const account = entry && (await this.accounts.get(entry.accountId))
    if (!account || !safeEqual(account.authkeyHash, keyHash) || account.suspended) return undefined
    return account.expiresOn < dateInZone(this.timeZone) ? undefined : account
  }

  /** The account of an authkey; `unauthenticated` for an unknown or expired one. */
  async require(authkey: unknown): Promise<Account> {
    const account = await this.authenticate(authkey)
    if (!account) throw new GatewayError('unauthenticated')
    return account
  }

  /** An account by id (the id comes from a record of that account). */
  get(id: string): Promise<Account | undefined> {
    return this.accounts.get(id)
  }

  /** The account registered with `email`, or undefined. */
  async byEmailAddress(email: string): Promise<Account | undefined> {
    const entry = await this.byEmail.get(hashKey(email.trim().toLowerCase()))
    return entry && this.accounts.load(entry.accountId)
  }

  /** Renew the account's plan (its own, or `planId`) for the plan's days from its last day, or from today when that has passed. */
  renew(email: string, planId?: string): Promise<Account> {
    return this.change(email, account => {
      const id = planId ?? account.planId
      const plan = this.plan(id, { detail: `unknown plan ${JSON.stringify(id)}` })
      const today = dateInZone(this.timeZone)
      const from = account.expiresOn >= today ? addDays(account.expiresOn, 1) : today
      return { ...account, planId: id, planName: plan.name, expiresOn: addDays(from, plan.days - 1) }
    })
  }

  /** Suspend the account (its key is refused everywhere at once) or resume it. */
  suspend(email: string, suspended: boolean): Promise<Account> {
    return this.change(email, account => ({ ...account, suspended }))
  }

  /** Give the account a new authkey (answered once, in clear); the old one stops working everywhere within the cache epoch's poll. */
  async rotateKey(email: string): Promise<{ account: Account; authkey: string }> {
    const authkey = randomKey(24)
    const authkeyHash = hashKey(authkey)
    let old: string | undefined
    const account = await this.change(email, async current => {
      old = current.authkeyHash
      await this.byKey.put(authkeyHash, { accountId: current.id })
      return { ...current, authkeyHash }
    })
    if (old && old !== authkeyHash) await this.byKey.remove(old)
    return { account, authkey }
  }

  /** The plan `id`, or `invalid-input`. */
  private plan(id: string, details?: { detail: string }): Plan {
    const plan = Object.hasOwn(this.plans, id) ? this.plans[id] : undefined
    if (!plan) throw new GatewayError('invalid-input', details)
    return plan
  }

  /** Change the account of `email` (compare-and-set), then drop every process's cached copy; `account-not-found` when there is none. */
  private async change(email: string, next: (account: Account) => Account | Promise<Account>): Promise<Account> {
    const found = await this.byEmailAddress(email)
    if (!found) throw new GatewayError('account-not-found')
    const updated = await this.accounts.update(found.id, current => (current ? next(current) : undefined))
    if (!updated) throw new GatewayError('account-not-found')
    await this.epoch?.bump()
    return updated
  }
}
