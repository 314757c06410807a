import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync } from 'node:fs'
import { silentLogger } from '../../src/logger.ts'
import { createRetryBuffer } from '../../src/store/retry-buffer.ts'
import { SpillFile } from '../../src/store/spill-file.ts'
import { waitFor } from '../helpers/gateway.ts'
import { tempDir } from '../helpers/standalone.ts'
import { flakyStore } from '../helpers/flaky-store.ts'

const test = suite('Spill files of two retry buffers of one name in one process (two gateways on one store, or one made after another closed)')

// src/wiring.ts builds `new SpillFile(resolved.spillDir, \`webhooks-${storeId}\`)` for each gateway: two gateways of one
// process on one store (same store id, default spillDir) got two SpillFiles with one path, each reading and deleting the other's lines.
test('each gateway replays every item it spilled', async () => {
  const dir = tempDir('zapgate-race-')
  const [a, b] = [flakyStore(), flakyStore()]
  const spillA = new SpillFile(dir, 'webhooks-0123456789abcdef')
  const spillB = new SpillFile(dir, 'webhooks-0123456789abcdef')
  const bufferA = createRetryBuffer<number>({ what: 'a', process: a.process, logger: silentLogger, memoryLimit: 2, spill: spillA })
  const bufferB = createRetryBuffer<number>({ what: 'b', process: b.process, logger: silentLogger, memoryLimit: 2, spill: spillB })
  await bufferA.start()
  await bufferB.start()
  for (let i = 0; i < 5; i++) bufferA.keep(i)
  for (let i = 100; i < 105; i++) bufferB.keep(i)
  await new Promise(resolve => setTimeout(resolve, 100)) // the appends land
  a.store.down = false
  await bufferA.offered(true)
  await waitFor(() => a.store.taken.length >= 5, 5000, 'gateway A to record its items')
  b.store.down = false
  await bufferB.offered(true)
  await new Promise(resolve => setTimeout(resolve, 1500))
  await bufferB.offered(true)
  await new Promise(resolve => setTimeout(resolve, 500))
  assert.equal(a.store.taken, [0, 1, 2, 3, 4], 'A recorded its own items, once each')
  assert.equal(b.store.taken, [100, 101, 102, 103, 104], 'B recorded every item it kept')
  assert.is(bufferB.size, 0, 'nothing is left waiting in B')
  await bufferA.close()
  await bufferB.close()
})

test('a gateway closed with the store down, then another made in the same process: nothing the first spilled is lost', async () => {
  const dir = tempDir('zapgate-race-')
  const first = flakyStore()
  const name = 'incoming-0123456789abcdef'
  const bufferA = createRetryBuffer<number>({ what: 'a', process: first.process, logger: silentLogger, memoryLimit: 2, spill: new SpillFile(dir, name) })
  await bufferA.start()
  for (let i = 0; i < 10; i++) bufferA.keep(i)
  await bufferA.close() // the store still down: all ten are in the spill file
  // The host makes a new gateway in the same process (same store, same spillDir).
  const second = flakyStore()
  const bufferB = createRetryBuffer<number>({ what: 'b', process: second.process, logger: silentLogger, memoryLimit: 2, spill: new SpillFile(dir, name) })
  await bufferB.start()
  for (let i = 100; i < 103; i++) bufferB.keep(i)
  await new Promise(resolve => setTimeout(resolve, 100))
  second.store.down = false
  await bufferB.offered(true)
  // What the first gateway spilled is recorded by the second (its file let go at close, taken over at the second's start), then what the second kept.
  await waitFor(() => second.store.taken.length === 13, 5000, 'every item of both gateways')
  assert.equal(second.store.taken, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 100, 101, 102])
  assert.equal(readdirSync(dir), [], 'no spill file left')
  await bufferB.close()
})

test.run()
