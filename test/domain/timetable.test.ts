import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { Timetable as DeliveryTimetable } from '../../src/domain/timetable.ts'
import { seededRandom } from '../helpers/random.ts'

const test = suite('DeliveryTimetable')
const entry = (key: string, due: number) => ({ key, lane: 'd', due })

test('takeDue(now) hands out the entries due by now, earliest first, and keeps the rest', () => {
  const timetable = new DeliveryTimetable(100)
  for (const [key, due] of [
    ['c', 30],
    ['a', 10],
    ['d', 40],
    ['b', 20],
  ] as const)
    timetable.add(entry(key, due))
  assert.equal(
    timetable.takeDue(25).map(e => e.key),
    ['a', 'b'],
  )
  assert.is(timetable.peek()?.key, 'c')
  assert.is(timetable.size, 2)
  assert.is(timetable.horizon, Infinity)
})

test('add(entry) for a key already held replaces its due time', () => {
  const timetable = new DeliveryTimetable(100)
  timetable.add(entry('a', 10))
  timetable.add(entry('b', 20))
  timetable.add(entry('a', 30))
  assert.is(timetable.size, 2)
  assert.equal(
    timetable.takeDue(100).map(e => `${e.key}@${e.due}`),
    ['b@20', 'a@30'],
  )
})

test('remove(key) drops one entry among many with equal due times', () => {
  const timetable = new DeliveryTimetable(100)
  for (const key of ['a', 'b', 'c', 'd']) timetable.add(entry(key, 5))
  assert.ok(timetable.remove('c'))
  assert.not.ok(timetable.remove('c'))
  assert.equal(
    timetable
      .takeDue(5)
      .map(e => e.key)
      .sort(),
    ['a', 'b', 'd'],
  )
})

test('when full, the entry due last gives way to an earlier one, and the horizon records what was left out', () => {
  const timetable = new DeliveryTimetable(3)
  timetable.add(entry('a', 10))
  timetable.add(entry('b', 20))
  timetable.add(entry('c', 30))
  timetable.add(entry('early', 5))
  assert.is(timetable.size, 3)
  assert.not.ok(timetable.remove('c'), 'c is not held (nothing to remove)')
  assert.is(timetable.horizon, 30)
  timetable.add(entry('late', 50))
  assert.not.ok(timetable.remove('late'), 'late is not held (nothing to remove)')
  assert.is(timetable.horizon, 30)
  assert.equal(
    timetable.takeDue(100).map(e => e.key),
    ['early', 'a', 'b'],
  )
})

test('a thousand random entries come out in due order', () => {
  const timetable = new DeliveryTimetable(10_000)
  const dues = Array.from({ length: 1000 }, (_, i) => ({ key: `k${i}`, due: Math.floor(Math.random() * 500) }))
  for (const { key, due } of dues) timetable.add(entry(key, due))
  for (let i = 0; i < 300; i++) timetable.remove(`k${i * 3}`)
  const out = timetable.takeDue(Infinity)
  assert.is(out.length, 700)
  for (let i = 1; i < out.length; i++) assert.ok(out[i - 1].due <= out[i].due)
})

test('random adds, removes and partial takes agree with a simple sorted model, full or not', () => {
  // A seeded generator so a failure can be replayed.
  const random = seededRandom(7)
  for (const capacity of [5, 50, 10_000]) {
    const timetable = new DeliveryTimetable(capacity)
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
        timetable.add(entry(key, due))
        model = model.filter(item => item.key !== key)
        const latest = model[model.length - 1]
        if (model.length < capacity) model.push({ key, due })
        else if (due < latest.due || (due === latest.due && key < latest.key)) {
          // Full: the entry last in order (due time, then key) gives way to a newcomer before it...
          model.pop()
          model.push({ key, due })
          horizon = Math.min(horizon, latest.due)
        } else horizon = Math.min(horizon, due) // ...and a newcomer after it is left out.
        sort()
      } else if (roll < 0.75) {
        const key = `k${Math.floor(random() * 400)}`
        assert.is(
          timetable.remove(key),
          model.some(item => item.key === key),
        )
        model = model.filter(item => item.key !== key)
      } else {
        now += Math.floor(random() * 30)
        const taken = timetable.takeDue(now).map(item => `${item.key}@${item.due}`)
        const expected = model.filter(item => item.due <= now).map(item => `${item.key}@${item.due}`)
        model = model.filter(item => item.due > now)
        assert.equal(taken, expected, `step ${step}, capacity ${capacity}`)
      }
      assert.is(timetable.size, model.length)
      assert.is(timetable.peek()?.key, model[0]?.key)
      assert.is(timetable.horizon, horizon)
    }
  }
})

test('entries due at the same time go out by their order (when they were scheduled), then by key', () => {
  const timetable = new DeliveryTimetable(100)
  timetable.add({ ...entry('zz-first', 10), order: 1 })
  timetable.add({ ...entry('aa-second', 10), order: 2 })
  timetable.add(entry('mm-no-order', 10))
  timetable.add({ ...entry('bb-later', 20), order: 0 })
  assert.equal(
    timetable.takeDue(30).map(e => e.key),
    ['mm-no-order', 'zz-first', 'aa-second', 'bb-later'],
  )
})

test.run()
