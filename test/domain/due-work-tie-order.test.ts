import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { DueWork } from '../../src/domain/due-work.ts'
import { Timetable } from '../../src/domain/timetable.ts'
import { silentLogger } from '../../src/logger.ts'
import { waitFor } from '../helpers/gateway.ts'

/**
 * Work due at the same time runs by its order (the scheduler's: when each item was scheduled), also
 * when more is stored than the timetable holds: what a full timetable leaves out for a later reload
 * must be what runs last, not what the store happened to list last.
 */
const test = suite('due work: equal due times in a full timetable')

test('full: a newcomer due as late as the last entry but earlier in order takes its place; the last in order is left out', () => {
  const timetable = new Timetable(3)
  for (const [key, order] of [
    ['c', 3],
    ['b', 2],
    ['d', 4],
  ] as const)
    timetable.add({ key, lane: 'x', due: 10, order })
  timetable.add({ key: 'a', lane: 'x', due: 10, order: 1 })
  assert.is(timetable.horizon, 10, 'something due at 10 was left out')
  assert.equal(
    timetable.takeDue(10).map(e => e.key),
    ['a', 'b', 'c'],
    'the three first in order are held; d (last in order) is left to storage',
  )
})

test('through the engine: items due at once, listed by the store in reverse order, more than the timetable holds, run in their order', async () => {
  const due = Date.now() - 1_000
  // The store lists the last scheduled first (a Redis SCAN lists in any order).
  const records = new Map(['k5', 'k4', 'k3', 'k2', 'k1'].map(key => [key, { lane: 'd1', order: Number(key.slice(1)) }]))
  const ran: string[] = []
  const work = new DueWork<{ lane: string; order: number }>(
    {
      what: 'test',
      async *all() {
        yield* records
      },
      async *ofLane(lane) {
        for (const entry of records) if (entry[1].lane === lane) yield entry
      },
      laneOf: record => record.lane,
      orderOf: record => record.order,
      dueOf: async key => (records.has(key) ? due : undefined),
      async run(key) {
        ran.push(key)
        records.delete(key)
        return undefined
      },
    },
    { concurrencyPerLane: 1, capacity: 2, lineLimit: 100, reconcileMs: 60_000 },
    silentLogger,
  )
  await work.start()
  await waitFor(() => ran.length === 5, 10_000, 'every item run')
  assert.equal(ran, ['k1', 'k2', 'k3', 'k4', 'k5'])
  await work.close()
})

test.run()
