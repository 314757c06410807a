import { suite } from 'uvu'
import { DueWork } from '../../src/domain/due-work.ts'
import { silentLogger } from '../../src/logger.ts'
import { waitFor } from '../helpers/gateway.ts'

/**
 * Work the full timetable left in storage is read back when it falls due, also when the timetable
 * has filled up since with work due later (retries): not at the next periodic rescan only.
 */
const test = suite('due work: left out of a full timetable, then everything held is due later')

test('an item left out, due before every item held since, runs when due (the rescan is a minute away)', async () => {
  const t0 = Date.now()
  const records = new Map<string, { lane: string; due: number }>()
  for (let i = 0; i < 4; i++) records.set(`a${i}`, { lane: `l${i}`, due: t0 + 200 })
  records.set('x', { lane: 'lx', due: t0 + 600 }) // left out: the timetable holds 4
  const ran: string[] = []
  const work = new DueWork<{ lane: string; due: number }>(
    {
      what: 'test',
      async *all() {
        yield* records
      },
      async *ofLane(lane) {
        for (const entry of records) if (entry[1].lane === lane) yield entry
      },
      laneOf: record => record.lane,
      dueOf: async (_key, record) => record.due,
      async run(key) {
        ran.push(key)
        if (key === 'x') return undefined
        // Each of the four fails and is retried in 30 s: the timetable is full again, of work due after x.
        const due = Date.now() + 30_000
        records.set(key, { ...records.get(key)!, due })
        return due
      },
    },
    { concurrencyPerLane: 1, capacity: 4, lineLimit: 100, reconcileMs: 60_000 },
    silentLogger,
  )
  await work.start()
  await waitFor(() => ran.includes('x'), 10_000, `x run (ran: ${ran.join(', ')})`)
  await work.close()
})

test.run()
