import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { DEFAULTS } from '../../../src/options.ts'
import { MAX_RETRY_AFTER_MS, MIN_RETRY_AFTER_MS, parseRetryAfter, retryDelay } from '../../../src/domain/webhooks/retry.ts'
import { parseRetrySchedule } from '../../../examples/env-config.ts'

const test = suite('webhook retry schedule')

test('the default schedule is the Standard Webhooks one: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h', () => {
  const hours = (h: number) => h * 3_600_000
  assert.equal(DEFAULTS.webhookRetryMs, [5_000, 300_000, 1_800_000, hours(2), hours(5), hours(10), hours(14), hours(20), hours(24)])
})

test('retryDelay(schedule, n) is the n-th delay with at most 20 % jitter either way', () => {
  const schedule = [1000, 2000, 3000]
  assert.is(
    retryDelay(schedule, 1, () => 0),
    800,
  )
  assert.is(
    retryDelay(schedule, 1, () => 0.5),
    1000,
  )
  assert.is(
    retryDelay(schedule, 2, () => 1),
    2400,
  )
  for (let i = 0; i < 200; i++) {
    const delay = retryDelay(schedule, 3)
    assert.ok(delay >= 2400 && delay <= 3600, `delay ${delay}`)
  }
})

test('retryDelay repeats the last delay past the end of the schedule', () => {
  assert.is(
    retryDelay([100, 500], 7, () => 0.5),
    500,
  )
})

test('parseRetryAfter reads delta-seconds', () => {
  assert.is(parseRetryAfter('120'), 120_000)
  assert.is(parseRetryAfter(' 3 '), 3_000)
})

test('parseRetryAfter reads an HTTP date relative to now', () => {
  const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')
  assert.is(parseRetryAfter('Wed, 21 Oct 2015 07:30:00 GMT', now), 120_000)
})

test('parseRetryAfter keeps the wait between 1 s and 24 h', () => {
  assert.is(parseRetryAfter('0'), MIN_RETRY_AFTER_MS)
  assert.is(parseRetryAfter('999999999'), MAX_RETRY_AFTER_MS)
  const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')
  assert.is(parseRetryAfter('Wed, 21 Oct 2015 07:00:00 GMT', now), MIN_RETRY_AFTER_MS)
})

test('parseRetryAfter ignores absent and unreadable values', () => {
  for (const value of [undefined, '', 'soon', '1.5', '-3', '2 minutes']) assert.is(parseRetryAfter(value), undefined, String(value))
})

test('parseRetrySchedule reads comma-separated milliseconds and refuses anything else', () => {
  assert.equal(parseRetrySchedule('50, 100,2000'), [50, 100, 2000])
  for (const bad of ['', 'a,b', '5s', '1,,2', '-1']) assert.throws(() => parseRetrySchedule(bad), /milliseconds/, bad)
})

test.run()
