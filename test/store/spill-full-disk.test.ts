import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import fsPromises from 'node:fs/promises'
import { syncBuiltinESMExports } from 'node:module'
import { silentLogger } from '../../src/logger.ts'
import { createRetryBuffer } from '../../src/store/retry-buffer.ts'
import { SpillFile } from '../../src/store/spill-file.ts'
import { hostTag } from '../../src/store/process-alive.ts'
import { waitFor } from '../helpers/gateway.ts'
import { tempDir } from '../helpers/standalone.ts'

const test = suite('SpillFile on a full disk: an append the disk cut short loses its own items only')

test('the disk fills in the middle of an append (part of the line written, then ENOSPC): the item spilled once there is room again is replayed', async () => {
  const dir = tempDir('zapgate-spill-full-')
  const store = { down: true, taken: [] as number[] }
  const process = async (event: { n: number }) => {
    if (store.down) throw new Error('store down')
    store.taken.push(event.n)
  }
  const spill = new SpillFile(dir, 'test')
  const buffer = createRetryBuffer<{ n: number }>({ what: 'events', process, logger: silentLogger, memoryLimit: 1, spill })
  await buffer.start()
  buffer.keep({ n: 0 }) // in memory
  buffer.keep({ n: 1 }) // past the memory limit: spilled
  await waitFor(() => existsSync(spill.path) && statSync(spill.path).size > 0, 2000, 'the first item spilled')
  const realAppend = fsPromises.appendFile
  fsPromises.appendFile = async (...args: Parameters<typeof realAppend>) => {
    fsPromises.appendFile = realAppend
    syncBuiltinESMExports()
    // What a full disk does: the kernel takes the first bytes of the write, then refuses the rest.
    await realAppend(args[0], String(args[1]).slice(0, 5), args[2])
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
  }
  syncBuiltinESMExports()
  buffer.keep({ n: 2 }) // lost: the disk is full (logged)
  await waitFor(() => buffer.size === 2, 2000, 'the failed append to be taken back')
  buffer.keep({ n: 3 }) // room again
  await waitFor(() => buffer.size === 3, 2000, 'the last item spilled')
  store.down = false
  await buffer.offered(true)
  await waitFor(() => buffer.size === 0, 5000, 'the replay')
  await buffer.close()
  assert.equal(store.taken, [0, 1, 3], 'every item but the one the full disk refused')
})

test("the disk fills while a start copies a gone process's spill file into its own: that file is left for the next start, and what this process spills then is replayed, nothing else", async () => {
  const dir = tempDir('zapgate-spill-full-')
  const gone = spawnSync(globalThis.process.execPath, ['-e', '0']).pid
  writeFileSync(join(dir, `test-${hostTag()}-${gone}.jsonl`), '{"n":1}\n{"n":2}\n')
  const store = { down: true, taken: [] as number[] }
  const process = async (event: { n: number }) => {
    if (store.down) throw new Error('store down')
    store.taken.push(event.n)
  }
  const realAppend = fsPromises.appendFile
  fsPromises.appendFile = async (...args: Parameters<typeof realAppend>) => {
    fsPromises.appendFile = realAppend
    syncBuiltinESMExports()
    await realAppend(args[0], (args[1] as Buffer).subarray(0, 12), args[2]) // the copy's first bytes, then a full disk
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
  }
  syncBuiltinESMExports()
  const spill = new SpillFile(dir, 'test')
  const buffer = createRetryBuffer<{ n: number }>({ what: 'events', process, logger: silentLogger, memoryLimit: 1, spill })
  await buffer.start()
  assert.ok(
    readdirSync(dir).some(file => file.endsWith('.taken')),
    "the gone process's events wait in a .taken file for the next start",
  )
  buffer.keep({ n: 3 }) // in memory
  buffer.keep({ n: 4 }) // spilled: written once there is room again
  await waitFor(() => existsSync(spill.path) && readFileSync(spill.path, 'utf8').endsWith('{"n":4}\n'), 2000, 'the item spilled')
  store.down = false
  await buffer.offered(true)
  await waitFor(() => buffer.size === 0, 5000, 'the replay')
  await buffer.close()
  assert.equal(store.taken, [3, 4], 'the events this process kept, and no part of the copy cut short')
})

test.run()
