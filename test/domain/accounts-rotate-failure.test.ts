import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { createAccounts, type Accounts } from '../../src/domain/accounts.ts'
import { silentLogger } from '../../src/logger.ts'
import { cacheEpoch } from '../../src/store/cache-epoch.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'
import { failingOnce } from '../helpers/failing-once-storage.ts'

/**
 * rotateKey writes the new key's index entry, then the account's key hash, then removes the old entry
 * and bumps the cache epoch. A store failure at any step must not lock the account out: after a
 * rotation that rejected, the old key still works; after one that resolved, the new key it answered does.
 */
const test = suite('rotateKey: a store failure part-way never leaves the account without a working key')

const PLANS = { basic: { name: 'Básico', days: 30 } }
const steps = {
  'the new key entry not written': ['set', 'authkey:'],
  "the account's new key hash not written": ['compareAndSet', 'account:'],
  "the account's new key hash written, its answer lost": ['compareAndSet', 'account:', true],
  'the old key entry not removed': ['delete', 'authkey:'],
  'the cache epoch not bumped': ['increment', 'cache-epoch'],
} as const

for (const [step, [method, prefix, lost]] of Object.entries(steps) as [string, readonly [Parameters<typeof failingOnce>[0], string, boolean?]][]) {
  test(`${step}: the old key works after a rejected rotation, the new one after an answered one`, async () => {
    const { storage, state } = failingOnce(method, prefix, { lost })
    const epoch = cacheEpoch(storage, 60_000, silentLogger)
    const accounts: Accounts = createAccounts(storage, new KeyedLock(), PLANS, 'America/Sao_Paulo', 2_000, epoch)
    const { authkey: oldKey } = await accounts.register({
      name: 'Ana',
      email: 'ana@example.com',
      password: 'segredo123',
      phone: '5511988880001',
      planId: 'basic',
    })
    assert.ok(await accounts.authenticate(oldKey), 'the old key works before the rotation')
    state.armed = true
    const rotated = await accounts.rotateKey('ana@example.com').then(
      answer => answer,
      () => undefined,
    )
    assert.ok(state.failed, 'the store failed once during the rotation')
    const fresh = createAccounts(storage, new KeyedLock(), PLANS, 'America/Sao_Paulo') // another process: nothing cached
    if (rotated) {
      assert.ok(await fresh.authenticate(rotated.authkey), 'the new key answered works')
      assert.equal(await fresh.authenticate(oldKey), undefined, 'the old key is refused')
    } else assert.ok(await fresh.authenticate(oldKey), 'the rotation rejected: the old key still works')
  })
}

test.run()
