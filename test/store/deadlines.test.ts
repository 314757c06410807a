import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { Deadlines } from '../../src/store/deadlines.ts'

const test = suite('Deadlines')
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

test('a call answered in time never fails; one left pending fails once, after its limit', async () => {
  const deadlines = new Deadlines(60)
  const failed: string[] = []
  const answered = deadlines.watch(() => failed.push('answered'))
  deadlines.watch(() => failed.push('pending'))
  const started = Date.now()
  answered()
  answered() // a second answer changes nothing
  assert.equal(deadlines.size, 1)
  await sleep(40)
  assert.deepEqual(failed, [])
  await sleep(80)
  assert.deepEqual(failed, ['pending'])
  assert.ok(Date.now() - started >= 60)
  assert.equal(deadlines.size, 0)
})

test('expireAll() fails every call still watched, oldest first, once; answered ones are left alone', async () => {
  const deadlines = new Deadlines(10_000)
  const failed: string[] = []
  deadlines.watch(() => failed.push('a'))
  const answered = deadlines.watch(() => failed.push('answered'))
  deadlines.watch(() => failed.push('b'))
  answered()
  deadlines.expireAll()
  assert.deepEqual(failed, ['a', 'b'])
  assert.equal(deadlines.size, 0)
  deadlines.watch(() => failed.push('c'))()
  deadlines.expireAll()
  assert.deepEqual(failed, ['a', 'b'], 'nothing fails twice, and an answered call never')
})

test('run() settles like the work, or rejects with the timeout error', async () => {
  const deadlines = new Deadlines(50)
  assert.equal(await deadlines.run(Promise.resolve('ok'), () => new Error('late')), 'ok')
  await assert.rejects(
    deadlines.run(Promise.reject(new Error('boom')), () => new Error('late')),
    /boom/,
  )
  await assert.rejects(
    deadlines.run(new Promise(() => {}), () => new Error('late')),
    /late/,
  )
})

test('calls expire in the order they joined, each in a turn of its own', async () => {
  const deadlines = new Deadlines(30)
  const order: number[] = []
  for (let i = 0; i < 5; i++) deadlines.watch(() => order.push(i))
  await sleep(100)
  assert.deepEqual(order, [0, 1, 2, 3, 4])
})

test('answered calls behind a long one neither fail nor pile up, and later calls still expire', async () => {
  const deadlines = new Deadlines(1000)
  let failures = 0
  const slow = deadlines.watch(() => failures++)
  // Many calls answered out of order behind the slow one.
  for (let round = 0; round < 5; round++) {
    const answers = Array.from({ length: 1000 }, () => deadlines.watch(() => failures++))
    for (const answer of answers.reverse()) answer()
    await sleep(25)
  }
  assert.equal(deadlines.size, 1)
  const late = deadlines.watch(() => failures++)
  slow()
  // The late call expires once its 1000 ms are up (later on a loaded machine).
  for (const started = Date.now(); failures === 0 && Date.now() - started < 3000;) await sleep(20)
  await sleep(50)
  assert.equal(failures, 1, 'only the call never answered failed')
  assert.equal(deadlines.size, 0)
  late() // answering after expiry changes nothing
  assert.equal(deadlines.size, 0)
})

test('an idle Deadlines holds no timer (the process can exit)', async () => {
  const deadlines = new Deadlines(20)
  const before = process.getActiveResourcesInfo().filter(name => name === 'Timeout').length
  deadlines.watch(() => {})()
  await sleep(60)
  assert.equal(process.getActiveResourcesInfo().filter(name => name === 'Timeout').length, before)
})

test('a call watched by an onExpiry after expireAll() (the guarded store hung: its probe) gets one timer, and none once answered', async () => {
  const deadlines = new Deadlines(40)
  const timeouts = () => process.getActiveResourcesInfo().filter(name => name === 'Timeout').length
  const before = timeouts()
  let probe: (() => void) | undefined
  let probeExpired = false
  deadlines.watch(() => {
    deadlines.expireAll()
    probe = deadlines.watch(() => (probeExpired = true))
  })
  deadlines.watch(() => {})
  while (!probe) await new Promise(resolve => setImmediate(resolve))
  assert.equal(timeouts(), before + 1, 'one timer serves the probe')
  probe()
  assert.equal(deadlines.size, 0)
  assert.equal(timeouts(), before, 'an idle Deadlines holds no timer')
  deadlines.watch(() => (probeExpired = true))
  await sleep(100)
  assert.ok(probeExpired, 'a later call still expires')
})

test('an onExpiry that throws does not stop the other calls from expiring', async () => {
  const deadlines = new Deadlines(30)
  const thrown: unknown[] = []
  const caught = (err: unknown) => thrown.push(err)
  process.on('uncaughtException', caught)
  try {
    const failed: string[] = []
    deadlines.watch(() => {
      throw new Error('boom')
    })
    deadlines.watch(() => failed.push('second'))
    await sleep(80)
    deadlines.watch(() => failed.push('later'))
    await sleep(80)
    assert.equal(thrown.length, 1)
    assert.deepEqual(failed, ['second', 'later'])
  } finally {
    process.off('uncaughtException', caught)
  }
})

test("a limit past setTimeout's 24.8 days neither expires early nor re-arms every millisecond", async () => {
  const warnings: string[] = []
  const onWarning = (warning: Error) => warnings.push(warning.name)
  process.on('warning', onWarning)
  try {
    const deadlines = new Deadlines(2 ** 31 + 1_000)
    const failed: string[] = []
    const answered = deadlines.watch(() => failed.push('pending'))
    await sleep(60)
    assert.deepEqual(failed, [])
    assert.equal(deadlines.size, 1)
    answered()
    await sleep(5)
    assert.deepEqual(warnings, [], 'no setTimeout overflow (it fires after 1 ms, and would re-arm so over and over)')
  } finally {
    process.off('warning', onWarning)
  }
})

test.run()
