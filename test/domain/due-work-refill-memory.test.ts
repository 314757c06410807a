import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { DueWork } from '../../src/domain/due-work.ts'
import { silentLogger } from '../../src/logger.ts'
import { waitFor } from '../helpers/gateway.ts'

/**
 * A lane's read (a refill: its line half empty after an overflow, or a refresh) holds about as many of
 * its due records as its line can take, not its whole backlog: docs/api.md, "Memory stays bounded
 * whatever the backlog ... loaded in batches (a device's own records by key prefix) as room frees up".
 * What does not fit stays in storage and runs later.
 */
const test = suite('due work: a lane read holds a batch, not the backlog')

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
const heapUsed = () => (gc(), process.memoryUsage().heapUsed)

/** A key of `bytes` characters of its own (a fresh string each call: nothing else keeps it alive). */
const bigKey = (n: number, bytes: number) => Buffer.alloc(bytes, 97).toString('latin1') + `:${n}`

test('a refresh of a lane with 10,000 due records (4 KB keys, 40 MB) holds a batch while it reads, not all of them', async () => {
  const count = 10_000
  let [ended, grewBy, before] = [false, 0, 0]
  const work = new DueWork<{ lane: string }>(
    {
      what: 'test',
      async *all() {},
      async *ofLane(lane) {
        for (let n = 0; n < count; n++) yield [bigKey(n, 4096), { lane }]
        await new Promise(resolve => setImmediate(resolve))
        grewBy = heapUsed() - before // every record has been handed over: what does the read still hold? (below 0 when what an earlier file of a shared process left was freed meanwhile)
        ended = true
      },
      laneOf: record => record.lane,
      dueOf: async (_key, _record, now) => now - 1,
      run: (_key, _lane, shutdown) => new Promise<undefined>(resolve => shutdown.addEventListener('abort', () => resolve(undefined))), // hung until close: the line does not drain meanwhile
    },
    { concurrencyPerLane: 1, capacity: 20, lineLimit: 10, reconcileMs: 60_000, closeGraceMs: 0 },
    silentLogger,
  )
  before = heapUsed()
  await work.refresh('a')
  assert.ok(ended, 'the read ended')
  assert.ok(grewBy < 10 * 2 ** 20, `the read held ${(grewBy / 2 ** 20).toFixed(1)} MB of the lane's 40 MB of keys`)
  await work.close()
})

test('what a batch left in storage runs later: every record of a backlog runs', async () => {
  const pending = new Set(Array.from({ length: 300 }, (_, n) => `k${String(n).padStart(3, '0')}`))
  const ran: string[] = []
  const work = new DueWork<{ lane: string }>(
    {
      what: 'test',
      async *all() {},
      async *ofLane(lane) {
        for (const key of pending) yield [key, { lane }]
      },
      laneOf: record => record.lane,
      dueOf: async (_key, _record, now) => now - 1,
      async run(key) {
        if (pending.delete(key)) ran.push(key) // as an outbox attempt claims its record: one done meanwhile is gone
        return undefined
      },
    },
    { concurrencyPerLane: 2, capacity: 20, lineLimit: 10, reconcileMs: 60_000 },
    silentLogger,
  )
  await work.refresh('a')
  await waitFor(() => pending.size === 0, 10_000, `the backlog to run (${pending.size} left)`)
  assert.is(ran.length, 300)
  await work.close()
})

test.run()
