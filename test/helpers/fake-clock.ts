import { mock } from 'node:test'

const realClearTimeout = globalThis.clearTimeout
const realClearInterval = globalThis.clearInterval
/** The class of Node's own timers (what a real setTimeout or setInterval returns). */
const RealTimeout = (() => {
  const probe = setTimeout(() => {}, 0)
  clearTimeout(probe)
  return probe.constructor
})()

/** Time under a test's control: setTimeout, setInterval and Date move only when it says so. */
export interface FakeClock {
  /** Move time on by `ms`, one millisecond at a time, letting promise chains and setImmediate callbacks settle after each step. */
  advance(ms: number): Promise<void>
  /** Move time on until `done()` holds (checked after each millisecond), at most `limitMs`; answers the time it took. */
  advanceUntil(done: () => boolean, limitMs: number): Promise<number>
}

/**
 * Run `body` on a fake clock (node:test's MockTimers: setTimeout, setInterval and Date, and performance.now; setImmediate
 * and promises stay real), so that a test asserts what happens at which time without depending on how
 * loaded the machine is. The real timers are back when `body` settles.
 */
export async function withFakeClock<T>(body: (clock: FakeClock) => Promise<T>): Promise<T> {
  const realPerformanceNow = performance.now
  const [fakeFrom, performanceFrom] = [Date.now(), performance.now()]
  mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'], now: fakeFrom })
  // The monotonic clock moves with the fake one (the Deadlines measure time by it).
  performance.now = () => performanceFrom + (Date.now() - fakeFrom)
  // A real timer of an earlier test may still run while the clock is fake, and clear itself then: that
  // clear must reach the real timer (the fake one would leave it running, and the process would never end).
  const fakeClearTimeout = globalThis.clearTimeout
  const fakeClearInterval = globalThis.clearInterval
  globalThis.clearTimeout = ((timer: unknown) =>
    timer instanceof RealTimeout ? realClearTimeout(timer as NodeJS.Timeout) : fakeClearTimeout(timer as never)) as typeof clearTimeout
  globalThis.clearInterval = ((timer: unknown) =>
    timer instanceof RealTimeout ? realClearInterval(timer as NodeJS.Timeout) : fakeClearInterval(timer as never)) as typeof clearInterval
  let elapsed = 0
  const step = async () => {
    mock.timers.tick(1)
    elapsed++
    for (let i = 0; i < 5; i++) await new Promise(resolve => setImmediate(resolve))
  }
  const clock: FakeClock = {
    async advance(ms) {
      for (let i = 0; i < ms; i++) await step()
    },
    async advanceUntil(done, limitMs) {
      const from = elapsed
      while (!done() && elapsed - from < limitMs) await step()
      return elapsed - from
    },
  }
  try {
    for (let i = 0; i < 5; i++) await new Promise(resolve => setImmediate(resolve))
    return await body(clock)
  } finally {
    mock.timers.reset()
    performance.now = realPerformanceNow
    globalThis.clearTimeout = realClearTimeout
    globalThis.clearInterval = realClearInterval
  }
}
