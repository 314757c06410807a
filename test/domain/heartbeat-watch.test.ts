import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { HeartbeatWatch } from '../../src/domain/instance-view.ts'

/**
 * Liveness by a heartbeat counter seen to move, timed by the observer's own monotonic clock (a fake
 * one here): no time stamp of the watched instance is ever read, so its clock cannot matter.
 */
const test = suite('HeartbeatWatch')

const TTL = 15_000
const BEAT = 3_000

function watched() {
  let now = 1_000
  const watch = new HeartbeatWatch(TTL, BEAT, () => now)
  return { watch, advance: (ms: number) => (now += ms) }
}

test('an instance whose counter moves at every read stays alive however long it runs', () => {
  const { watch, advance } = watched()
  for (let beat = 0; beat < 100; beat++) {
    assert.equal(watch.observe(new Map([['a', beat]])), [])
    advance(BEAT)
  }
})

test('an instance whose counter stays the same for the time-to-live of reads is silent, and not before', () => {
  const { watch, advance } = watched()
  watch.observe(
    new Map([
      ['a', 7],
      ['b', 1],
    ]),
  )
  let silent: string[] = []
  let waited = 0
  for (let beat = 2; silent.length === 0; beat++) {
    advance(BEAT)
    waited += BEAT
    silent = watch.observe(
      new Map([
        ['a', 7],
        ['b', beat],
      ]),
    )
  }
  assert.equal(silent, ['a'])
  assert.is(waited, TTL, 'silent after exactly the time-to-live of unmoving reads')
  assert.ok(watch.stillSilent('a', 7))
  assert.not.ok(watch.stillSilent('a', 8), 'a record written again since is not the silent one')
  assert.not.ok(watch.stillSilent('b', 6))
})

test('a value first read counts as moved then: an old record found at start is alive for a time-to-live', () => {
  const { watch, advance } = watched()
  advance(10 * TTL)
  assert.equal(watch.observe(new Map([['old', 3]])), [])
  for (let t = BEAT; t < TTL; t += BEAT) {
    advance(BEAT)
    assert.equal(watch.observe(new Map([['old', 3]])), [])
  }
  advance(BEAT)
  assert.equal(watch.observe(new Map([['old', 3]])), ['old'])
})

test('after a gap in reading (the store away for everyone) nobody is silent: the watch starts again', () => {
  const { watch, advance } = watched()
  watch.observe(new Map([['a', 1]]))
  advance(BEAT)
  watch.observe(new Map([['a', 1]]))
  // The store did not answer for 20 s: this observer read nothing, and nobody could beat.
  advance(20_000)
  assert.equal(watch.observe(new Map([['a', 1]])), [], 'not judged on time it could not watch')
  assert.not.ok(watch.stillSilent('a', 1))
  for (let t = BEAT; t < TTL; t += BEAT) {
    advance(BEAT)
    assert.equal(watch.observe(new Map([['a', 1]])), [])
  }
  advance(BEAT)
  assert.equal(watch.observe(new Map([['a', 1]])), ['a'], 'silent a time-to-live after the watch started again')
})

test('an id no longer listed is forgotten', () => {
  const { watch, advance } = watched()
  watch.observe(new Map([['a', 1]]))
  advance(BEAT)
  watch.observe(new Map())
  advance(TTL)
  assert.not.ok(watch.stillSilent('a', 1))
})

test.run()
