import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { DueWork } from '../../src/domain/due-work.ts'
import { silentLogger } from '../../src/logger.ts'

/**
 * A closed DueWork reads nothing more from storage: a start that comes after its close (a failed
 * createGateway closes the webhook outbox while the outbox's start still awaits its spill replay, which
 * then starts the loop) or a rescan asked after it (an instance's departure, an account change) lists
 * nothing. Before, each listed the pending work once more, after the gateway had stopped.
 */
const test = suite('due work: nothing after close')

function engine() {
  const listed: string[] = []
  const work = new DueWork<{ lane: string }>(
    {
      what: 'test',
      async *all() {
        listed.push('all')
        yield ['k1', { lane: 'd1' }]
      },
      async *ofLane() {
        listed.push('ofLane')
      },
      laneOf: record => record.lane,
      dueOf: async () => Date.now() + 60_000,
      run: async () => undefined,
    },
    { concurrencyPerLane: 1, capacity: 10, lineLimit: 100, reconcileMs: 60_000 },
    silentLogger,
  )
  return { work, listed }
}

test('a start after close lists nothing', async () => {
  const { work, listed } = engine()
  await work.close()
  await work.start()
  assert.equal(listed, [])
})

test('a rescan after close lists nothing; before it, one does', async () => {
  const { work, listed } = engine()
  await work.start()
  assert.equal(listed, ['all'])
  await work.close()
  await work.rescan()
  assert.equal(listed, ['all'])
})

test.run()
