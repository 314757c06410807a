import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { DeliverySchedule } from '../../../src/domain/webhooks/schedule.ts'

const test = suite('DeliverySchedule')
const entry = (key: string, due: number) => ({ key, deviceId: 'd', due })

test('takeDue(now) hands out the entries due by now, earliest first, and keeps the rest', () => {
  const schedule = new DeliverySchedule(100)
  for (const [key, due] of [['c', 30], ['a', 10], ['d', 40], ['b', 20]] as const) schedule.add(entry(key, due))
  assert.equal(schedule.takeDue(25).map(e => e.key), ['a', 'b'])
  assert.is(schedule.peek()?.key, 'c')
  assert.is(schedule.size, 2)
  assert.is(schedule.horizon, Infinity)
})

test('add(entry) for a key already held replaces its due time', () => {
  const schedule = new DeliverySchedule(100)
  schedule.add(entry('a', 10))
  schedule.add(entry('b', 20))
  schedule.add(entry('a', 30))
  assert.is(schedule.size, 2)
  assert.equal(schedule.takeDue(100).map(e => `${e.key}@${e.due}`), ['b@20', 'a@30'])
})

test('remove(key) drops one entry among many with equal due times', () => {
  const schedule = new DeliverySchedule(100)
  for (const key of ['a', 'b', 'c', 'd']) schedule.add(entry(key, 5))
  assert.ok(schedule.remove('c'))
  assert.not.ok(schedule.remove('c'))
  assert.equal(schedule.takeDue(5).map(e => e.key).sort(), ['a', 'b', 'd'])
})

test('when full, the entry due last gives way to an earlier one, and the horizon records what was left out', () => {
  const schedule = new DeliverySchedule(3)
  schedule.add(entry('a', 10))
  schedule.add(entry('b', 20))
  schedule.add(entry('c', 30))
  schedule.add(entry('early', 5))
  assert.is(schedule.size, 3)
  assert.not.ok(schedule.has('c'))
  assert.is(schedule.horizon, 30)
  schedule.add(entry('late', 50))
  assert.not.ok(schedule.has('late'))
  assert.is(schedule.horizon, 30)
  assert.equal(schedule.takeDue(100).map(e => e.key), ['early', 'a', 'b'])
})

test('a thousand random entries come out in due order', () => {
  const schedule = new DeliverySchedule(10_000)
  const dues = Array.from({ length: 1000 }, (_, i) => ({ key: `k${i}`, due: Math.floor(Math.random() * 500) }))
  for (const { key, due } of dues) schedule.add(entry(key, due))
  for (let i = 0; i < 300; i++) schedule.remove(`k${i * 3}`)
  const out = schedule.takeDue(Infinity)
  assert.is(out.length, 700)
  for (let i = 1; i < out.length; i++) assert.ok(out[i - 1].due <= out[i].due)
})

test.run()
