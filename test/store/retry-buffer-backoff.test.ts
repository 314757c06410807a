import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { silentLogger } from '../../src/logger.ts'
import { createRetryBuffer, type RetryBuffer } from '../../src/store/retry-buffer.ts'
import { withFakeClock, type FakeClock } from '../helpers/fake-clock.ts'

/**
 * The retry buffer backs off while the store stays down (1 s, 2 s, 4 s, ... up to 30 s); once an offer
 * leaves nothing waiting (the store is back), the back-off starts over: the next outage is retried 1 s
 * after its first refusal, not at the long delay the previous outage had reached.
 */
const test = suite('RetryBuffer: the back-off starts again at 1 s after the store came back')

test('down long enough to back off to 8 s, back (a retry went through), then down again: the next retry comes 1 s later, not 8 s or more', () =>
  withFakeClock(async clock => {
    const { store, attempts, buffer, kept } = await backedOff(clock)
    store.down = false // back: the retry at 15 s (8 s after the last) takes the item
    await clock.advanceUntil(() => store.taken.length === 1, 10_000)
    assert.equal(store.taken, [1])
    assert.is(attempts.at(-1)! - kept, 15_000)
    assert.is(buffer.size, 0)
    await theNextOutageFromOneSecond(clock, { store, attempts, buffer })
  }))

test('the store came back and an offer of its own emptied the buffer (storeAnswers, not the timer): the next outage is retried 1 s later too, not at the old backed-off timer', () =>
  withFakeClock(async clock => {
    const { store, attempts, buffer } = await backedOff(clock)
    store.down = false // back, and the guarded storage says so at once (wiring.ts storeAnswers: offered(true))
    assert.is(await buffer.offered(true), true)
    assert.equal(store.taken, [1])
    await theNextOutageFromOneSecond(clock, { store, attempts, buffer })
  }))

test('the store answers another call while an offer is under way, and that offer is then refused: what waits is offered again at once, not at the next retry (30 s at most)', async () => {
  const taken: number[] = []
  let offers = 0
  const buffer: RetryBuffer<number> = createRetryBuffer<number>({
    what: 'numbers',
    logger: silentLogger,
    async process(item) {
      if (++offers > 1) return void taken.push(item)
      await new Promise(resolve => setImmediate(resolve))
      // Another store call is answered now (the guarded storage's onAnswer: wiring.ts storeAnswers), while this one's refusal, sent before the store came back, is on its way.
      void buffer.offered(true)
      throw new Error('store down')
    },
  })
  buffer.keep(1)
  await buffer.offered(true)
  await buffer.offered() // the offer under way, if any
  assert.equal(taken, [1], 'offered again once the refused offer ended')
  assert.is(buffer.size, 0)
  await buffer.close()
})

/** A buffer whose store refused item 1 at 1, 3 and 7 s after it was kept (backed off 1, 2, 4 s: the next wait 8 s); the store still down. */
async function backedOff(clock: FakeClock) {
  const store = { down: true, taken: [] as number[] }
  const attempts: number[] = []
  const process = async (item: number) => {
    attempts.push(Date.now())
    if (store.down) throw new Error('store down')
    store.taken.push(item)
  }
  const buffer = createRetryBuffer<number>({ what: 'numbers', process, logger: silentLogger })
  const kept = Date.now()
  buffer.keep(1)
  await clock.advanceUntil(() => attempts.length === 3, 10_000)
  assert.equal(
    attempts.map(at => at - kept),
    [1000, 3000, 7000],
    'backed off 1 s, 2 s, 4 s (the next wait 8 s)',
  )
  return { store, attempts, buffer, kept }
}

/** Item 1 done, the store goes down again as item 2 is kept: its first retry comes 1 s later; then the store takes it. */
async function theNextOutageFromOneSecond(clock: FakeClock, { store, attempts, buffer }: Omit<Awaited<ReturnType<typeof backedOff>>, 'kept'>) {
  store.down = true
  const before = attempts.length
  const keptAgain = Date.now()
  buffer.keep(2)
  await clock.advanceUntil(() => attempts.length > before, 10_000)
  assert.is(attempts.length, before + 1, 'offered again')
  assert.is(attempts.at(-1)! - keptAgain, 1000, 'the first retry of the new outage comes after 1 s (not at the timer of the last outage)')
  store.down = false
  await clock.advanceUntil(() => store.taken.length === 2, 5_000)
  assert.equal(store.taken, [1, 2])
  await buffer.close()
}

test.run()
