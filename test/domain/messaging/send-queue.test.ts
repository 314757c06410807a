import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { SendQueues } from '../../../src/domain/messaging/send-queue.ts'
import { GatewayError } from '../../../src/errors.ts'
import { withFakeClock } from '../../helpers/fake-clock.ts'

const test = suite('per-device send queues')

const options = { sendTimeoutMs: 1000, minIntervalMs: 0, intervalJitterMs: 0, sendQueueLimit: 100 }
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))
/** A promise the test settles. */
const deferred = () => {
  let resolve!: () => void
  return { promise: new Promise<void>(settle => (resolve = settle)), resolve }
}
/** Let promise chains and setImmediate callbacks run their course: a job that could start has started. */
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise(resolve => setImmediate(resolve))
}

test('run(device, job) runs the jobs of one device one at a time, in order', async () => {
  const queues = new SendQueues(options)
  const log: string[] = []
  let running = 0
  const job = (name: string, ms: number) => async () => {
    running++
    assert.equal(running, 1, 'one job at a time')
    log.push(`start ${name}`)
    await sleep(ms)
    log.push(`end ${name}`)
    running--
    return name
  }
  const results = await Promise.all([queues.run('d1', job('a', 30)), queues.run('d1', job('b', 5)), queues.run('d1', job('c', 1))])
  assert.deepEqual(results, ['a', 'b', 'c'])
  assert.deepEqual(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c'])
})

test('run(device, job) runs the jobs of different devices side by side', async () => {
  // Each job waits until all three have started: jobs run one after another would never get there,
  // and the first would be given up on at its time-out instead.
  const queues = new SendQueues(options)
  let started = 0
  let allStarted!: () => void
  const together = new Promise<void>(resolve => (allStarted = resolve))
  const job = async () => {
    if (++started === 3) allStarted()
    await together
    return started
  }
  assert.deepEqual(await Promise.all(['d1', 'd2', 'd3'].map(d => queues.run(d, job))), [3, 3, 3])
})

test('minIntervalMs and jitter space the jobs of a device', () =>
  withFakeClock(async clock => {
    const queues = new SendQueues({ ...options, minIntervalMs: 60, intervalJitterMs: 40 })
    const starts: number[] = []
    const all = Promise.all(Array.from({ length: 4 }, () => queues.run('d1', async () => void starts.push(Date.now()))))
    await clock.advanceUntil(() => starts.length === 4, 1_000)
    await all
    const gaps = starts.slice(1).map((start, i) => start - starts[i]!)
    assert.equal(gaps.length, 3)
    // The fake clock moves a millisecond a step: a start can land one step after its pause ends.
    for (const gap of gaps) assert.ok(gap >= 60 && gap <= 101, `gap ${gap} ms: minIntervalMs 60 plus a jitter of 0 to 40`)
  }))

test('a job that stalls past timeoutMs is answered 504 at its time-out and the queue moves on', () =>
  withFakeClock(async clock => {
    const queues = new SendQueues({ ...options, sendTimeoutMs: 150 })
    let answered: GatewayError | undefined
    const stalled = queues.run('d1', () => new Promise(() => {})).catch((err: GatewayError) => (answered = err))
    await clock.advance(50) // joins with time left after the stalled job is given up on
    const next = queues.run('d1', async () => 'next').catch((err: unknown) => err) // settled either way: an early assert must not leave it unhandled
    await clock.advance(99)
    assert.ok(answered === undefined, 'not given up on before its time-out')
    // The time-outs are swept every tenth of sendTimeoutMs: answered within one sweep of it.
    const took = await clock.advanceUntil(() => answered !== undefined, 1_000)
    assert.ok(took <= 15 + 1, `answered ${took} ms after its time-out`)
    assert.equal(((await stalled) as GatewayError).code, 'send-stalled')
    await clock.advanceUntil(() => false, 5)
    assert.equal(await next, 'next')
  }))

test('a job still queued at its timeout (behind a pacing pause) is answered 504 and never runs', async () => {
  const queues = new SendQueues({ ...options, sendTimeoutMs: 150, minIntervalMs: 400 })
  let ran = false
  assert.equal(await queues.run('d1', async () => 'first'), 'first')
  const queued = queues.run('d1', async () => void (ran = true))
  await assert.rejects(queued, (err: GatewayError) => err.code === 'send-queue-timeout')
  await sleep(400)
  assert.equal(ran, false)
})

test('a job whose timeout passed behind a stalled one is never run, even when the stalled one is given up on first', async () => {
  // Both join in the same millisecond, so both are due at once; the sweep gives up on the stalled
  // one first and frees the device, and the one behind it must not start as if it had time left.
  const queues = new SendQueues({ ...options, sendTimeoutMs: 60 })
  const realNow = Date.now
  const joined = realNow()
  Date.now = () => joined
  let ran = false
  let stalled: Promise<unknown>
  let behind: Promise<unknown>
  try {
    stalled = queues.run('d1', () => new Promise(() => {}))
    behind = queues.run('d1', async () => void (ran = true))
  } finally {
    Date.now = realNow
  }
  await assert.rejects(stalled, (err: GatewayError) => err.code === 'send-stalled')
  await assert.rejects(behind, (err: GatewayError) => err.code === 'send-queue-timeout')
  assert.equal(ran, false, 'the job past its timeout was not sent')
  assert.equal(await queues.run('d1', async () => 'later'), 'later')
})

test('a device that never runs out of work keeps a bounded queue', async () => {
  // Each job queues the next before it ends, so the device's queue never drains.
  const queues = new SendQueues({ ...options, sendQueueLimit: 10 })
  const internal = queues as unknown as { queues: Map<string, { queue: { size: number } }> }
  let longest = 0
  const sends = 5000
  await new Promise<void>((resolve, reject) => {
    let done = 0
    const job = async () => {
      longest = Math.max(longest, internal.queues.get('d1')!.queue.size)
      if (++done < sends) queues.run('d1', job).catch(reject)
      else resolve()
    }
    queues.run('d1', job).catch(reject)
  })
  assert.ok(longest <= 10, `the queue held ${longest} jobs for ${sends} sends`)
})

test('a job failure is passed on and does not stop later jobs', async () => {
  const queues = new SendQueues(options)
  const failing = queues.run('d1', async () => {
    throw new Error('boom')
  })
  const later = queues.run('d1', async () => 'ok')
  await assert.rejects(failing, /boom/)
  assert.equal(await later, 'ok')
})

test('a device with limit jobs waiting gets 429 for the next one', async () => {
  const queues = new SendQueues({ ...options, sendQueueLimit: 2 })
  const first = queues.run('d1', () => sleep(50))
  const second = queues.run('d1', () => sleep(1))
  await assert.rejects(
    queues.run('d1', async () => 1),
    (err: GatewayError) => err.code === 'send-queue-full',
  )
  await Promise.all([first, second])
  assert.equal(await queues.run('d1', async () => 2), 2)
})

test('queues idle for idleQueueMs are deleted, so the map holds only devices with recent work', async () => {
  const queues = new SendQueues({ ...options, minIntervalMs: 20, idleQueueMs: 30 })
  await Promise.all(Array.from({ length: 50 }, (_, i) => queues.run(`d${i}`, async () => i)))
  assert.ok(queues.size > 0, 'pacing holds the queues for a moment')
  await sleep(20)
  assert.equal(queues.size, 50, 'a queue idle for less than idleQueueMs is kept')
  await sleep(100)
  assert.equal(queues.size, 0)
})

test('close() lets queued jobs finish and refuses new ones with 503', async () => {
  const queues = new SendQueues(options)
  const pending = queues.run('d1', () => sleep(50).then(() => 'done'))
  await queues.close()
  assert.equal(await pending, 'done')
  await assert.rejects(
    queues.run('d1', async () => 1),
    (err: GatewayError) => err.code === 'shutting-down',
  )
})

// An idle device's job runs at once, outside p-queue (the fast path): the jobs joining meanwhile still wait their turn.
test('jobs joining while an idle device runs its job at once wait for it, in order, one at a time', async () => {
  const queues = new SendQueues(options)
  let running = 0
  const job = (log: string[], name: string, wait?: Promise<void>) => async () => {
    running++
    log.push(`start ${name}${running > 1 ? ' (two at once)' : ''}`)
    await wait
    log.push(`end ${name}`)
    running--
    return name
  }
  for (const round of [1, 2]) {
    const log: string[] = []
    const gate = deferred()
    const a = queues.run('d1', job(log, 'a', gate.promise))
    assert.deepEqual(log, ['start a'], `round ${round}: an idle device starts its job at once`)
    const rest = [queues.run('d1', job(log, 'b')), queues.run('d1', job(log, 'c'))]
    await settle()
    assert.deepEqual(log, ['start a'], `round ${round}: b and c wait for a`)
    gate.resolve()
    assert.deepEqual(await Promise.all([a, ...rest]), ['a', 'b', 'c'])
    assert.deepEqual(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c'], `round ${round}`)
  }
})

test('a job joining while a job run at once stalls starts once the stall is answered; the late answer changes nothing', () =>
  withFakeClock(async clock => {
    const queues = new SendQueues({ ...options, sendTimeoutMs: 150 })
    const late = deferred()
    let stall: GatewayError | undefined
    const stalled = queues.run('d1', () => late.promise).catch((err: GatewayError) => (stall = err))
    await clock.advance(50)
    let started = false
    const next = queues.run('d1', async () => void (started = true))
    await clock.advance(95)
    assert.equal(started, false, 'not while the stalled job holds the device')
    await clock.advanceUntil(() => started, 1_000)
    assert.equal(stall?.code, 'send-stalled')
    await next
    // The device is idle again: the next job runs at once; the stalled job answers meanwhile, and the one after still waits.
    const gate = deferred()
    const log: string[] = []
    const x = queues.run('d1', async () => void (log.push('start x'), await gate.promise, log.push('end x')))
    late.resolve()
    await stalled
    const y = queues.run('d1', async () => void log.push('y'))
    await settle()
    assert.deepEqual(log, ['start x'], 'y waits for x')
    gate.resolve()
    await Promise.all([x, y])
    assert.deepEqual(log, ['start x', 'end x', 'y'])
  }))

test('close() waits for a job run at once on an idle device, and for the jobs queued behind one', async () => {
  const queues = new SendQueues(options)
  const [alone, first] = [deferred(), deferred()]
  const log: string[] = []
  const jobs = [
    queues.run('d1', async () => void (await alone.promise, log.push('d1'))),
    queues.run('d2', async () => void (await first.promise, log.push('d2 first'))),
    queues.run('d2', async () => void log.push('d2 second')),
  ]
  let closed = false
  const closing = queues.close().then(() => (closed = true))
  await settle()
  assert.equal(closed, false, 'close() waits while d1 and d2 run')
  first.resolve()
  await settle()
  assert.deepEqual(log, ['d2 first', 'd2 second'])
  assert.equal(closed, false, 'close() waits while d1 runs')
  alone.resolve()
  await closing
  assert.deepEqual(log, ['d2 first', 'd2 second', 'd1'])
  await Promise.all(jobs)
})

test('the queue limit counts a job run at once', async () => {
  const queues = new SendQueues({ ...options, sendQueueLimit: 1 })
  const gate = deferred()
  const first = queues.run('d1', () => gate.promise)
  assert.equal(await queues.run('d1', async () => 1).catch((err: GatewayError) => err.code), 'send-queue-full')
  gate.resolve()
  await first
  assert.equal(await queues.run('d1', async () => 2), 2)
})

test('a job that throws before returning a promise rejects its run(), run at once or queued', async () => {
  const queues = new SendQueues(options)
  const boom = () => {
    throw new Error('boom')
  }
  await assert.rejects(queues.run('d1', boom), /boom/)
  const gate = deferred()
  const first = queues.run('d1', () => gate.promise)
  const queued = queues.run('d1', boom)
  gate.resolve()
  await first
  await assert.rejects(queued, /boom/)
  assert.equal(await queues.run('d1', async () => 'ok'), 'ok')
})

test('the sweeper keeps the queue of a device whose job runs at once', () =>
  withFakeClock(async clock => {
    const queues = new SendQueues({ ...options, sendTimeoutMs: 10_000, idleQueueMs: 30 })
    const gate = deferred()
    const log: string[] = []
    const running = queues.run('d1', async () => void (await gate.promise, log.push('first')))
    await clock.advance(100)
    assert.equal(queues.size, 1, 'kept while its job runs')
    const next = queues.run('d1', async () => void log.push('next'))
    await settle()
    assert.deepEqual(log, [], 'a job joining waits for the running one')
    gate.resolve()
    await Promise.all([running, next])
    assert.deepEqual(log, ['first', 'next'])
    await clock.advance(100)
    assert.equal(queues.size, 0, 'dropped once idle')
  }))

test.run()
