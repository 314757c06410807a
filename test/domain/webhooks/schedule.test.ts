import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { DeliverySchedule } from '../../../src/domain/webhooks/schedule.ts'
import { seededRandom } from '../../helpers/random.ts'

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

test('random adds, removes and partial takes agree with a simple sorted model, full or not', () => {
  // A seeded generator so a failure can be replayed.
  const random = seededRandom(7)
  for (const capacity of [5, 50, 10_000]) {
    const schedule = new DeliverySchedule(capacity)
    let model: { key: string; due: number }[] = []
    let horizon = Infinity
    let now = 0
    const sort = () => model.sort((a, b) => a.due - b.due || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    for (let step = 0; step < 5_000; step++) {
      const roll = random()
      if (roll < 0.6) {
        // Mostly new events due now or later (appended), sometimes an earlier one (inserted).
        const key = `k${Math.floor(random() * 400)}`
        const due = now + Math.floor(random() < 0.8 ? random() * 50 : -random() * 20)
        schedule.add(entry(key, due))
        model = model.filter(item => item.key !== key)
        const latest = model[model.length - 1]
        if (model.length < capacity) model.push({ key, due })
        else if (due < latest.due) {
          // Full: the entry due last gives way to an earlier newcomer...
          model.pop()
          model.push({ key, due })
          horizon = Math.min(horizon, latest.due)
        } else horizon = Math.min(horizon, due) // ...and a newcomer due no earlier is left out.
        sort()
      } else if (roll < 0.75) {
        const key = `k${Math.floor(random() * 400)}`
        assert.is(schedule.remove(key), model.some(item => item.key === key))
        model = model.filter(item => item.key !== key)
      } else {
        now += Math.floor(random() * 30)
        const taken = schedule.takeDue(now).map(item => `${item.key}@${item.due}`)
        const expected = model.filter(item => item.due <= now).map(item => `${item.key}@${item.due}`)
        model = model.filter(item => item.due > now)
        assert.equal(taken, expected, `step ${step}, capacity ${capacity}`)
      }
      assert.is(schedule.size, model.length)
      assert.is(schedule.peek()?.key, model[0]?.key)
      assert.is(schedule.horizon, horizon)
    }
  }
})

test.run()
