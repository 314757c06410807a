import { randomUUID } from 'node:crypto'
import { GatewayError } from '../errors.ts'
import { hashKey, hashPassword, randomKey, safeEqual } from '../security/keys.ts'
import { Collection } from '../store/collection.ts'
import { UniqueIndex } from '../store/unique-index.ts'
import type { CacheEpoch } from '../store/cache-epoch.ts'
import type { KeyedLock } from '../store/keyed-lock.ts'
import type { Storage } from '../ports/storage.ts'
import { dateInZone } from './clock.ts'

/** A subscription plan: its display name and how many days an account lasts. */
export interface Plan {
  name: string
  days: number
}

/** The default plans: `plano: "1"` works out of the box. */
export const defaultPlans: Record<string, Plan> = { '1': { name: 'Gratuito', days: 30 } }

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
}

/** What a registration asks for. */
export interface Registration {
  name: string
  email: string
  password: string
  phone: string
  planId: string
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
    epoch?: CacheEpoch,
  ) {
    // Every request authenticates: accounts and authkey entries read stay cached cacheTtlMs.
    const cache = { cache: { ttlMs: cacheTtlMs, maxEntries: 10_000, epoch } }
    this.accounts = new Collection(storage, lock, 'account', cache)
    this.byEmail = new UniqueIndex(storage, lock, 'account-email')
    this.byKey = new Collection(storage, lock, 'authkey', cache)
  }

  /**
   * Create an account and its authkey (returned once, in clear). Throws `email-taken` when the
   * e-mail is taken, `invalid-input` for an unknown plan.
   */
  async register(input: Registration): Promise<{ account: Account; authkey: string }> {
    const plan = Object.hasOwn(this.plans, input.planId) ? this.plans[input.planId] : undefined
    if (!plan) throw new GatewayError('invalid-input')
    const email = input.email.trim().toLowerCase()
    const emailId = hashKey(email)
    // A quick answer for the common case (the e-mail's claim below is what decides a race).
    if (await this.byEmail.owner(emailId)) throw new GatewayError('email-taken')
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
    // The e-mail is claimed last, atomically in the store: of concurrent registrations with one
    // e-mail, in any number of processes, exactly one wins; the others take back what they wrote. A
    // crash before the claim leaves an unreachable record and the e-mail free, never a taken e-mail
    // without an account.
    await this.accounts.put(account.id, account)
    await this.byKey.put(account.authkeyHash, { accountId: account.id })
    if (!(await this.byEmail.claim(emailId, { accountId: account.id }))) {
      await this.byKey.remove(account.authkeyHash)
      await this.accounts.remove(account.id)
      throw new GatewayError('email-taken')
    }
    return { account, authkey }
  }

  /** The account of a valid, unexpired authkey, or undefined. */
  async authenticate(authkey: unknown): Promise<Account | undefined> {
    if (!isKeyShaped(authkey)) return undefined
    const keyHash = hashKey(authkey)
    const entry = await this.byKey.get(keyHash)
    if (!entry) return undefined
    const account = await this.accounts.get(entry.accountId)
    return this.validFor(account, keyHash)
  }

  /**
   * The account of a valid authkey when the cache alone tells (its key entry and its record both
   * cached), else undefined: then authenticate() or require() decides, reading the store. Never
   * refuses anything, so every refusal keeps coming from the one path that reads the store; what it
   * accepts passes the very checks authenticate() applies. Spares the hot path its promises.
   */
  cachedAccount(authkey: unknown): Account | undefined {
    if (!isKeyShaped(authkey)) return undefined
    const keyHash = hashKey(authkey)
    const entry = this.byKey.peek(keyHash)
    return entry && this.validFor(this.accounts.peek(entry.accountId), keyHash)
  }

  /** The account of an authkey; `unauthenticated` for an unknown or expired one. */
  async require(authkey: unknown): Promise<Account> {
    const account = await this.authenticate(authkey)
    if (!account) throw new GatewayError('unauthenticated')
    return account
  }

  /** An account by id (internal use: the id comes from a record of that account). */
  get(id: string): Promise<Account | undefined> {
    return this.accounts.get(id)
  }

  /** `account` when it is the one of the authkey hashed to `keyHash` (compared in constant time) and unexpired. */
  private validFor(account: Account | undefined, keyHash: string): Account | undefined {
    if (!account || !safeEqual(account.authkeyHash, keyHash)) return undefined
    if (account.expiresOn < dateInZone(this.timeZone)) return undefined
    return account
  }
}

// --- Internal helpers ---

/** An authkey worth hashing: a non-empty string of at most 256 characters. */
function isKeyShaped(authkey: unknown): authkey is string {
  return typeof authkey === 'string' && authkey.length > 0 && authkey.length <= 256
}
