/**
 * One gateway process's RetryBuffer for test/store/retry-buffer-close.test.ts, run with a small heap
 * (`--max-old-space-size`). SPILL_DIR: the spill folder; SPILL_MODE:
 *   - `close`: spills SPILL_COUNT events of 1 MiB (`{ n, body }`, a few at a time), starts the buffer
 *     over them with the store down (it reads 64 MiB of them back and the store refuses the first),
 *     then closes it;
 *   - `replay`: starts a buffer (it takes over the spill files of gone processes) with the store up,
 *     and waits until it has recorded everything;
 *   - `down`: starts a buffer (it takes over the spill files of gone processes) with the store down again,
 *     prints `{ refused }` once the store refused the first event read back, and waits to be killed.
 * Prints one JSON line at the end: `{ taken }`, the `n` of each event recorded, in order. Not a test by itself.
 */
import { silentLogger } from '../../src/logger.ts'
import { createRetryBuffer } from '../../src/store/retry-buffer.ts'
import { SpillFile } from '../../src/store/spill-file.ts'

const [dir, mode, count] = [process.env.SPILL_DIR!, process.env.SPILL_MODE, Number(process.env.SPILL_COUNT ?? 0)]
const taken: number[] = []
const spill = new SpillFile(dir, 'test')
const body = 'x'.repeat(2 ** 20)
if (mode === 'close') for (let n = 0; n < count; n += 8) await spill.append(Array.from({ length: Math.min(8, count - n) }, (_, i) => ({ n: n + i, body })))
const buffer = createRetryBuffer<{ n: number; body: string }>({
  what: 'events',
  logger: silentLogger,
  spill,
  process: async item => {
    if (mode === 'down') console.log(JSON.stringify({ refused: item.n }))
    if (mode === 'close' || mode === 'down') throw new Error('store down')
    taken.push(item.n)
  },
})
await buffer.start()
if (mode === 'down') await new Promise(() => setInterval(() => {}, 60_000)) // until killed
if (mode === 'replay') while (buffer.size > 0) await new Promise(resolve => setTimeout(resolve, 50))
await buffer.close()
console.log(JSON.stringify({ taken }))
