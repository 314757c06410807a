import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn, spawnSync } from 'node:child_process'
import { readdirSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { silentLogger } from '../../src/logger.ts'
import { hostTag } from '../../src/store/process-alive.ts'
import { createRetryBuffer } from '../../src/store/retry-buffer.ts'
import { SpillFile } from '../../src/store/spill-file.ts'
import { waitFor } from '../helpers/gateway.ts'
import { tempDir, watch } from '../helpers/standalone.ts'
import { NODE_TS } from '../helpers/node-ts.ts'

const test = suite('RetryBuffer.close() and the next start: a spill file larger than memory may hold')

/** Run test/helpers/spill-child.ts with a 192 MB heap: its exit status, its error (stderr's first line naming one) and what it recorded. */
function runChild(dir: string, mode: 'close' | 'replay', count = 0): { status: number | null; stderr: string; taken: number[] } {
  const child = spawnSync(process.execPath, ['--max-old-space-size=192', ...NODE_TS, 'test/helpers/spill-child.ts'], {
    env: { ...process.env, SPILL_DIR: dir, SPILL_MODE: mode, SPILL_COUNT: String(count) },
    encoding: 'utf8',
    maxBuffer: 2 ** 24,
  })
  const stdout = child.stdout.trim()
  return {
    status: child.status,
    stderr: child.stderr.split('\n').find(line => /error/i.test(line)) ?? child.stderr.slice(-400),
    taken: stdout ? (JSON.parse(stdout.split('\n').at(-1)!) as { taken: number[] }).taken : [],
  }
}

/** Give the one spill file in `dir` the pid of a process that is gone, as if its process had ended. */
function endOwner(dir: string): void {
  const [file] = readdirSync(dir)
  const gone = spawnSync(process.execPath, ['-e', '0']).pid
  renameSync(join(dir, file!), join(dir, file!.replace(/-(\d+)(?=[-.])/, `-${gone}`)))
}

test('close() with the store down and 256 MiB spilled runs in a 192 MB heap, and the next start, in one too, records all 256 events in order', async () => {
  const dir = tempDir('zapgate-spill-close-')
  const closed = runChild(dir, 'close', 256)
  assert.is(closed.status, 0, `close() ended the process: ${closed.stderr}`)
  const files = readdirSync(dir)
  assert.is(files.length, 1, `one spill file is left (${files.join(', ')})`)
  assert.ok(statSync(join(dir, files[0]!)).size > 256 * 2 ** 20, 'every event is in it')
  endOwner(dir)
  const next = runChild(dir, 'replay')
  assert.is(next.status, 0, `the next start ended the process: ${next.stderr}`)
  assert.equal(
    next.taken,
    Array.from({ length: 256 }, (_, n) => n),
    'the 64 read back before the close first, then the rest, each once',
  )
  assert.equal(readdirSync(dir), [], 'the spill file is deleted once recorded')
})

test('a start killed (SIGKILL) while it replays a spill file, the store down again: the events it read back are still on disk, and the next start records them', async () => {
  const dir = tempDir('zapgate-spill-killed-')
  assert.is(runChild(dir, 'close', 4).status, 0, 'a graceful stop with the store down spilled the 4 events')
  endOwner(dir)
  // The next process takes the file over and reads the 4 events back; the store refuses the first, and the process is killed.
  const child = spawn(process.execPath, [...NODE_TS, 'test/helpers/spill-child.ts'], {
    env: { ...process.env, SPILL_DIR: dir, SPILL_MODE: 'down' },
  })
  const seen = watch(child)
  await waitFor(() => seen.output().includes('"refused":0') || seen.exited(), 30_000, 'the first event read back and refused')
  child.kill('SIGKILL')
  await waitFor(() => seen.exited(), 5000, 'the killed process to end')
  const next = runChild(dir, 'replay')
  assert.is(next.status, 0, `the next start ended the process: ${next.stderr}`)
  assert.equal(next.taken, [0, 1, 2, 3], 'every event, though the killed process had read them all back')
})

test('a line a killed process cut inside a multi-byte character, read back in batches: the events after it are all replayed', async () => {
  const dir = tempDir('zapgate-spill-cut-')
  // Two gone processes' files, taken over in name order: the first one's last append cut inside "á" (its first byte of two).
  const [first, second] = [0, 1].map(() => spawnSync(process.execPath, ['-e', '0']).pid).sort((a, b) => (String(a) < String(b) ? -1 : 1))
  const named = (pid: number) => join(dir, `test-${hostTag()}-${pid}.jsonl`)
  writeFileSync(named(first), Buffer.concat([Buffer.from('1\n{"text":"Ol'), Buffer.from([0xc3])]))
  writeFileSync(named(second), '2\n3\n')
  const taken: number[] = []
  // 2 lines read back at a time: the cut line ends the first batch.
  const next = createRetryBuffer<number>({
    what: 'numbers',
    process: async item => void taken.push(item),
    logger: silentLogger,
    memoryLimit: 2,
    spill: new SpillFile(dir, 'test'),
  })
  await next.start()
  await waitFor(() => taken.includes(3), 5000, 'the replay of the last event')
  await next.close()
  assert.equal(taken, [1, 2, 3], 'the cut line dropped, every whole one recorded')
  assert.is(next.size, 0, 'nothing is left waiting')
})

test('an item kept while close() puts the items in memory back in the spill file is spilled behind them, not lost', async () => {
  const dir = tempDir('zapgate-spill-close-')
  let buffer!: ReturnType<typeof createRetryBuffer<number>>
  class KeptMeanwhile extends SpillFile {
    override putBack(items: unknown[]): Promise<void> {
      const done = super.putBack(items)
      buffer.keep(3) // an event the transport reports as the gateway stops, the store still down
      return done
    }
  }
  const refuse = async () => {
    throw new Error('store down')
  }
  buffer = createRetryBuffer<number>({ what: 'numbers', process: refuse, logger: silentLogger, spill: new KeptMeanwhile(dir, 'test') })
  await buffer.start()
  for (let i = 0; i < 3; i++) buffer.keep(i)
  await buffer.close()
  await waitFor(() => readdirSync(dir).length === 1 && statSync(join(dir, readdirSync(dir)[0]!)).size === 8, 2000, 'the 4 items in the spill file')
  endOwner(dir)
  const taken: number[] = []
  const next = recordingBuffer(dir, taken)
  await next.start()
  await waitFor(() => taken.length === 4, 5000, 'the replay')
  assert.equal(taken, [0, 1, 2, 3])
  await next.close()
})

test("a start takes over the .taken file a takeover killed mid-copy left, and a crashed close()'s .closing file; a live taker's are left alone", async () => {
  const dir = tempDir('zapgate-spill-taken-')
  // Named as this process's spill file would be, with the pid of a process that is gone (then of one that runs: this one's parent, pid only).
  const ownName = basename(new SpillFile(dir, 'test').path).replace(/(\.\d+)?\.jsonl$/, '.jsonl') // the first of its name in a process has no `.<n>`
  const named = (pid: number, suffix: string) => join(dir, ownName.replace(new RegExp(`-${process.pid}(?=[-.])`), `-${pid}`) + suffix)
  const gone = spawnSync(process.execPath, ['-e', '0']).pid
  writeFileSync(named(gone, '.1700000000000.taken'), '0\n1\n2\n') // renamed by a taker killed before its copy ended
  writeFileSync(named(gone, ''), '3\n4\n') // a spill file whole, and the new file its crashed close() left beside it
  writeFileSync(named(gone, '.closing'), '9\n3\n') // the events its close() had in memory (9), then the unread lines it was copying
  const live = join(dir, `test-${hostTag()}-${process.ppid}.jsonl`)
  writeFileSync(`${live}.1700000000000.taken`, '7\n')
  writeFileSync(`${live}.closing`, '8\n')
  const taken: number[] = []
  const next = recordingBuffer(dir, taken)
  await next.start()
  await waitFor(() => next.size === 0, 5000, 'the replay')
  await next.close()
  assert.equal([...new Set(taken)].sort(), [0, 1, 2, 3, 4, 9], 'every event is recorded, those only in the closing file too (some twice: at least once)')
  // In arrival order: what the killed taker was moving into the file, what the crashed close() was putting in front of its unread lines, then the file.
  assert.equal([...new Set(taken)], [0, 1, 2, 9, 3, 4])
  assert.equal(readdirSync(dir).sort(), [`${basename(live)}.1700000000000.taken`, `${basename(live)}.closing`], "only the live process's files are left")
})

test('close() when the spill file cannot be written (a full disk): resolves, logs how many were lost, and a later close() of the shutdown still runs', async () => {
  const dir = tempDir('zapgate-spill-full-')
  class FullDisk extends SpillFile {
    override putBack(items: unknown[]): Promise<void> {
      void super.putBack([]) // the file's bookkeeping as a real write would start it
      return Promise.reject(Object.assign(new Error(`ENOSPC: no space left on device (${items.length} lines)`), { code: 'ENOSPC' }))
    }
  }
  const errors: { obj: Record<string, unknown>; msg: string }[] = []
  const logger = { ...silentLogger, error: (obj: object | string, msg?: string) => void errors.push({ obj: obj as Record<string, unknown>, msg: msg ?? '' }) }
  const refuse = async () => {
    throw new Error('store down')
  }
  const buffer = createRetryBuffer<number>({ what: 'webhook events', process: refuse, logger, spill: new FullDisk(dir, 'test') })
  await buffer.start()
  for (let i = 0; i < 3; i++) buffer.keep(i)
  let next = false
  await buffer.close().then(() => (next = true)) // as wiring's close() goes on to the outbox, the instances and the store
  assert.ok(next, 'close() resolved: the rest of the shutdown runs')
  const lost = errors.find(e => /lost/.test(e.msg))
  assert.ok(lost, `the loss is logged (${JSON.stringify(errors.map(e => e.msg))})`)
  assert.is(lost!.obj.count, 3, 'with how many events')
  assert.is((lost!.obj.err as { code?: string }).code, 'ENOSPC', 'and why')
  assert.not.ok(
    errors.some(e => /kept in a spill file/.test(e.msg)),
    'nothing claims they were kept',
  )
})

/** A RetryBuffer on the spill files of `dir` whose store takes every item into `taken`. */
function recordingBuffer(dir: string, taken: number[]) {
  return createRetryBuffer<number>({ what: 'numbers', process: async item => void taken.push(item), logger: silentLogger, spill: new SpillFile(dir, 'test') })
}

test.run()
