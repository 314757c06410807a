import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { GatewayError } from '../../src/errors.ts'
import { silentLogger } from '../../src/logger.ts'
import { LocalCounters } from '../../src/security/local-counters.ts'
import { RateLimits, type RateLimitSettings } from '../../src/security/rate-limits.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'

/**
 * Counters kept in this process's memory (memory and SQLite stores) are bounded. Spraying made-up
 * keys fills that bound with fresh counters; it must not make the process forget the count of a
 * key being limited, which would let a brute force go on past its limit.
 */
const test = suite('rate limits under key spraying')

const ATTACKER = '203.0.113.7'
const SPRAYER = '198.51.100.9'
/** More fresh counters than the process keeps (each sprayed key adds two: its requests and its failures from the IP). */
const SPRAYED = 30_000

const settings: RateLimitSettings = {
  perAccount: { points: 3000, duration: 60 },
  authFailures: { points: 3, duration: 900 },
  authFailuresPerIp: { points: 300, duration: 900 },
  registrations: { points: 1, duration: 3600 },
  otpVerifications: { points: 2, duration: 900 },
}

/** Whether `step` is refused as rate-limited (the 429 of the API). */
async function refused(step: Promise<void>): Promise<boolean> {
  try {
    await step
    return false
  } catch (err) {
    if (err instanceof GatewayError && err.code === 'rate-limited') return true
    throw err
  }
}

/** What a request with a made-up authkey from the sprayer's IP counts: the key's requests, then its failure. */
async function spray(limits: RateLimits, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const authkey = `inventada-${i}`
    await refused(limits.beforeAuth(authkey, SPRAYER))
    await refused(limits.authFailed(authkey, SPRAYER))
  }
}

test('with counters in memory, spraying made-up authkeys resets no limited key, IP or OTP recipient: each stays refused', async () => {
  const limits = new RateLimits(settings, Object.assign(memoryStorage(), { reach: 'process' as const }), silentLogger)
  for (let i = 0; i < 3; i++) assert.equal(await refused(limits.authFailed('chave-alvo', ATTACKER)), false)
  assert.equal(await refused(limits.beforeAuth('chave-alvo', ATTACKER)), true)
  assert.equal(await refused(limits.registration(ATTACKER)), false)
  assert.equal(await refused(limits.registration(ATTACKER)), true)
  for (let i = 0; i < 2; i++) await limits.otpVerification('loja', '5511977770001')
  assert.equal(await refused(limits.otpVerification('loja', '5511977770001')), true)

  await spray(limits, SPRAYED)

  assert.equal(await refused(limits.beforeAuth('chave-alvo', ATTACKER)), true, 'the brute-forced key from its IP')
  assert.equal(await refused(limits.registration(ATTACKER)), true, 'registrations from the IP')
  assert.equal(await refused(limits.otpVerification('loja', '5511977770001')), true, 'OTP verifications of the recipient')
  assert.equal(await refused(limits.beforeAuth('chave-honesta', ATTACKER)), false, 'another key is not refused')
})

test('LocalCounters keeps at most its bound, fresh counters push out only fresh ones, and a counter at its limit outlives a spray of counters below theirs', () => {
  const counters = new LocalCounters(100)
  for (let i = 0; i < 5; i++) counters.add('limited', 5, 60_000)
  for (let i = 0; i < 3; i++) counters.add('busy', 1000, 60_000)
  for (let i = 0; i < 10_000; i++) counters.add(`fresh-${i}`, 5, 60_000)
  for (let i = 0; i < 10_000; i++) for (let hit = 0; hit < 3; hit++) counters.add(`twice-${i}`, 1000, 60_000)
  assert.ok(counters.size <= 10 * 100, `${counters.size} counters held`) // ten levels of 100
  assert.equal(counters.count('limited'), 5)
  assert.equal(counters.count('fresh-9999'), 1)
  assert.equal(counters.count('fresh-0'), 0)
  // Counters of the same level push each other out, oldest first: `busy` (3 counts) went with the sprayed threes.
  assert.equal(counters.count('busy'), 0)
  assert.equal(counters.count('twice-9999'), 3)
})

test('LocalCounters: an expired counter reads 0 and counts again from 1', async () => {
  const counters = new LocalCounters(100)
  assert.equal(counters.add('soon', 5, 20), 1)
  assert.equal(counters.add('soon', 5, 20), 2)
  await new Promise(resolve => setTimeout(resolve, 30))
  assert.equal(counters.count('soon'), 0)
  assert.equal(counters.add('soon', 5, 20), 1)
})

test.run()
