import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { createAccounts } from '../../src/domain/accounts.ts'
import { isGatewayError } from '../../src/errors.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'
import { failingOnce } from '../helpers/failing-once-storage.ts'

/**
 * register writes the account and its key entry, then claims the e-mail (set-if-absent). A store
 * failure at the claim must not leave the e-mail taken by an account nobody was given the key of:
 * a registration that rejected is retried by its user, who must then get an account. One that lost
 * a race for the e-mail takes back what it wrote: when that fails it is still answered email-taken.
 */
const test = suite(
  'register: a store failure never leaves the e-mail taken by an account without a known key, nor answers a lost race otherwise than email-taken',
)

const PLANS = { basic: { name: 'Básico', days: 30 } }
const INPUT = { name: 'Ana', email: 'ana@example.com', password: 'segredo123', phone: '5511988880001', planId: 'basic' }

for (const lost of [false, true]) {
  test(`the e-mail claim ${lost ? 'written, its answer lost' : 'not written'}: answered, its key works; rejected, a retry registers`, async () => {
    const { storage, state } = failingOnce('add', 'account-email:', { lost, armed: true })
    const accounts = createAccounts(storage, new KeyedLock(), PLANS, 'America/Sao_Paulo')
    const first = await accounts.register(INPUT).catch(() => undefined)
    assert.ok(state.failed, 'the store failed once during the registration')
    if (first) {
      assert.equal((await accounts.authenticate(first.authkey))?.id, first.account.id, 'the key answered works')
      assert.equal((await accounts.byEmailAddress(INPUT.email))?.id, first.account.id, 'the e-mail is its account')
      return
    }
    const retried = await accounts.register(INPUT).catch(err => err)
    assert.ok(!isGatewayError(retried, 'email-taken'), 'the retry is not refused as email-taken: the e-mail is held by no account whose key was given')
    assert.equal((await accounts.authenticate(retried.authkey))?.id, retried.account.id)
    assert.equal((await accounts.byEmailAddress(INPUT.email))?.id, retried.account.id)
  })
}

for (const prefix of ['authkey:', 'account:']) {
  test(`two registrations of one e-mail, the loser's clean-up of its ${prefix.slice(0, -1)} record failing: the loser is answered email-taken`, async () => {
    const { storage, state } = failingOnce('delete', prefix, { armed: true })
    const accounts = createAccounts(storage, new KeyedLock(), PLANS, 'America/Sao_Paulo')
    const answers = await Promise.allSettled([accounts.register(INPUT), accounts.register(INPUT)])
    assert.ok(state.failed, "the store failed once during the loser's clean-up")
    const [won, lost] = answers[0].status === 'fulfilled' ? answers : [answers[1], answers[0]]
    assert.equal(won.status, 'fulfilled')
    assert.equal(lost.status, 'rejected')
    assert.ok(isGatewayError((lost as PromiseRejectedResult).reason, 'email-taken'), `refused as email-taken, not ${(lost as PromiseRejectedResult).reason}`)
    assert.equal((await accounts.byEmailAddress(INPUT.email))?.id, (won as PromiseFulfilledResult<{ account: { id: string } }>).value.account.id)
  })
}

test.run()
