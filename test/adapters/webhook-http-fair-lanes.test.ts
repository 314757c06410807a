import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import PQueue from 'p-queue'
import { FairLanes, type LaneLimits } from '../../adapters/webhook-http/fair-lanes.ts'

const test = suite('adapters/webhook-http: fair lanes per device, bounded per host and in all')

const limits: LaneLimits = { perDevice: 2, perHost: 3, overall: 4, maxWaitingPerHost: 100 }

/** Jobs that run until released, recording which are running. */
function gate() {
  const running = new Set<string>()
  const releases = new Map<string, () => void>()
  let most = 0
  const job = (name: string) => () =>
    new Promise<string>(resolve => {
      running.add(name)
      most = Math.max(most, running.size)
      releases.set(name, () => {
        running.delete(name)
        resolve(name)
      })
    })
  const release = (name: string) => releases.get(name)!()
  return { job, running, release, most: () => most }
}

const tick = () => new Promise(resolve => setImmediate(resolve))

test('a device runs at most perDevice jobs; the others of its host still start', async () => {
  const lanes = new FairLanes(PQueue, limits)
  const { job, running, release } = gate()
  const done = ['a1', 'a2', 'a3', 'a4'].map(name => lanes.run('h', 'a', job(name)))
  done.push(lanes.run('h', 'b', job('b1')))
  await tick()
  assert.equal([...running].sort(), ['a1', 'a2', 'b1'], "a's third and fourth wait in a's line, not in front of b's")
  release('a1')
  await tick()
  assert.equal([...running].sort(), ['a2', 'a3', 'b1'])
  for (const name of ['a2', 'a3', 'b1']) release(name)
  await tick()
  release('a4')
  assert.equal(await Promise.all(done), ['a1', 'a2', 'a3', 'a4', 'b1'])
})

test('at most perHost jobs run per host and overall jobs in all', async () => {
  const lanes = new FairLanes(PQueue, limits)
  const { job, running, release, most } = gate()
  const names = ['h1-a1', 'h1-b1', 'h1-c1', 'h1-d1', 'h2-a1', 'h2-b1']
  const done = names.map(name => lanes.run(name.slice(0, 2), name.slice(3, 4), job(name)))
  await tick()
  assert.equal([...running].sort(), ['h1-a1', 'h1-b1', 'h1-c1', 'h2-a1'], 'three for h1 (its limit), one for h2 (four in all)')
  release('h1-a1')
  await tick()
  assert.is(running.size, 4)
  assert.ok(!running.has('h1-d1') || !running.has('h2-b1'), 'still four in all')
  while (running.size > 0) {
    for (const name of [...running]) release(name)
    await tick()
  }
  assert.equal((await Promise.all(done)).sort(), [...names].sort())
  assert.is(most(), 4)
})

test('past maxWaitingPerHost waiting jobs of a host, whichever devices, a job fails at once and never runs', async () => {
  const lanes = new FairLanes(PQueue, { ...limits, perHost: 1, maxWaitingPerHost: 2 })
  const { job, running, release } = gate()
  const done = [lanes.run('h', 'a', job('a1')), lanes.run('h', 'a', job('a2')), lanes.run('h', 'b', job('b1'))]
  let ran = false
  assert.throws(() => lanes.run('h', 'c', async () => (ran = true)), /receiver h is busy \(2 deliveries waiting\)/)
  const other = lanes.run('other', 'c', job('c1'))
  await tick()
  assert.equal([...running].sort(), ['a1', 'c1'], 'another host is not affected')
  for (const name of ['a1', 'c1', 'a2', 'b1']) {
    await tick()
    release(name)
  }
  assert.equal(await Promise.all([...done, other]), ['a1', 'a2', 'b1', 'c1'])
  assert.is(ran, false)
})

test('idle lines and host lanes are dropped: memory follows the devices with work, not every device seen', async () => {
  const lanes = new FairLanes(PQueue, limits)
  const { job, release } = gate()
  const done = Array.from({ length: 50 }, (_, i) => lanes.run(`host-${i % 5}`, `device-${i}`, job(`j${i}`)))
  await tick()
  assert.equal(lanes.size, { hosts: 5, lines: 50 })
  for (let i = 0; i < 50; i++) {
    await tick()
    if (i < 49) release(`j${i}`)
  }
  await tick()
  assert.equal(lanes.size, { hosts: 1, lines: 1 }, 'only the device with a job left')
  release('j49')
  await Promise.all(done)
  await lanes.onIdle()
  assert.equal(lanes.size, { hosts: 0, lines: 0 })
  const failing = lanes.run('host-x', 'device-x', async () => {
    throw new Error('refused')
  })
  await failing.then(
    () => assert.unreachable('the job failed'),
    error => assert.is((error as Error).message, 'refused'),
  )
  await tick()
  assert.equal(lanes.size, { hosts: 0, lines: 0 }, 'a failed job leaves nothing behind either')
})

test.run()
