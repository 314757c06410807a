import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { rmSync } from 'node:fs'
import { silentLogger } from '../../src/logger.ts'
import { createRetryBuffer } from '../../src/store/retry-buffer.ts'
import { SpillFile } from '../../src/store/spill-file.ts'
import { tempDir } from '../helpers/standalone.ts'

/** The retry buffer keeps arrival order across its memory and its spill file (docs/api.md: an event arriving meanwhile waits for them). */
const test = suite('retry buffer: arrival order')

test('an item kept after a partial replay waits behind the spilled ones', async () => {
  const dir = tempDir()
  const done: number[] = []
  let [up, allowOne] = [false, false]
  const buffer = createRetryBuffer<number>({
    what: 'items',
    logger: silentLogger,
    memoryLimit: 2,
    spill: new SpillFile(dir, 'order'),
    async process(n) {
      if (!up && !allowOne) throw new Error('the store is down')
      allowOne = false
      done.push(n)
    },
  })
  try {
    for (const n of [1, 2, 3, 4]) buffer.keep(n) // 1 and 2 in memory, 3 and 4 spilled
    allowOne = true
    await buffer.offered(true) // 1 done, then the store refuses again: 2 in memory, 3 and 4 spilled
    buffer.keep(5)
    up = true
    while (buffer.size > 0) await buffer.offered(true)
    assert.equal(done, [1, 2, 3, 4, 5])
  } finally {
    await buffer.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
