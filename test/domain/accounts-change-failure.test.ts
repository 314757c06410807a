import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { createAccounts, type Accounts } from '../../src/domain/accounts.ts'
import { addDays, dateInZone } from '../../src/domain/clock.ts'
import { silentLogger } from '../../src/logger.ts'
import { cacheEpoch } from '../../src/store/cache-epoch.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'
import { failingOnce } from '../helpers/failing-once-storage.ts'

/**
 * renew, suspend and resume store the account's new record (a compare-and-set), then bump the cache
 * epoch. A store failure at a step must never leave a call rejected whose change took place: a host
 * retries a rejected renew, and a renew stored twice gives a plan period away; a suspend reported
 * failed that took effect misleads the host.
 */
const test = suite('renew, suspend (and resume): a rejected call changed nothing; an answered one tells what is stored')

const PLANS = { basic: { name: 'Básico', days: 30 } }
const TZ = 'America/Sao_Paulo'
const EMAIL = 'ana@example.com'
const steps = {
  "the account's new record not written": ['compareAndSet', 'account:'],
  "the account's new record written, its answer lost": ['compareAndSet', 'account:', true],
  'the cache epoch not bumped': ['increment', 'cache-epoch'],
} as const
const calls = {
  renew: (accounts: Accounts) => accounts.renew(EMAIL),
  suspend: (accounts: Accounts) => accounts.suspend(EMAIL, true),
}

for (const [step, [method, prefix, lost]] of Object.entries(steps) as [string, readonly ['increment' | 'compareAndSet', string, boolean?]][]) {
  for (const [name, call] of Object.entries(calls)) {
    test(`${name}, ${step}: rejected, the account is as before; answered, as answered`, async () => {
      const { storage, state } = failingOnce(method, prefix, { lost })
      const epoch = cacheEpoch(storage, 60_000, silentLogger)
      const accounts = createAccounts(storage, new KeyedLock(), PLANS, TZ, 2_000, epoch)
      await accounts.register({ name: 'Ana', email: EMAIL, password: 'segredo123', phone: '5511988880001', planId: 'basic' })
      const fresh = createAccounts(storage, new KeyedLock(), PLANS, TZ) // another process: nothing cached
      const before = (await fresh.byEmailAddress(EMAIL))!
      state.armed = true
      const answered = await call(accounts).then(
        account => account,
        () => undefined,
      )
      assert.ok(state.failed, 'the store failed once during the call')
      const after = (await fresh.byEmailAddress(EMAIL))!
      const shown = (account: typeof after) => [account.expiresOn, account.suspended === true]
      if (answered) assert.deepEqual(shown(after), shown(answered), 'answered: the account stored is the one answered')
      else assert.deepEqual(shown(after), shown(before), 'rejected: the account is unchanged')
    })
  }
}

test('a host that retries a rejected renew until it is answered renews the plan once', async () => {
  for (const [method, prefix, lost] of Object.values(steps) as (readonly ['increment' | 'compareAndSet', string, boolean?])[]) {
    const { storage, state } = failingOnce(method, prefix, { lost })
    const accounts = createAccounts(storage, new KeyedLock(), PLANS, TZ, 2_000, cacheEpoch(storage, 60_000, silentLogger))
    const { account } = await accounts.register({ name: 'Ana', email: EMAIL, password: 'segredo123', phone: '5511988880001', planId: 'basic' })
    state.armed = true
    let renewed
    for (let attempt = 0; !renewed && attempt < 3; attempt++) renewed = await accounts.renew(EMAIL).catch(() => undefined)
    assert.equal(renewed?.expiresOn, addDays(account.expiresOn, 30), `${method} ${prefix}${lost ? ' (answer lost)' : ''}: one period more`)
    assert.equal((await accounts.byEmailAddress(EMAIL))?.expiresOn, addDays(account.expiresOn, 30))
    assert.ok(account.expiresOn > dateInZone(TZ))
  }
})

test.run()
