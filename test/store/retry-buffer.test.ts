import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import fsPromises from 'node:fs/promises'
import { syncBuiltinESMExports } from 'node:module'
import { existsSync, mkdirSync, readdirSync, renameSync, rmdirSync, statSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { silentLogger } from '../../src/logger.ts'
import { createRetryBuffer } from '../../src/store/retry-buffer.ts'
import { SpillFile } from '../../src/store/spill-file.ts'
import { ownStamp } from '../../src/store/process-alive.ts'
import { waitFor } from '../helpers/gateway.ts'
import { tempDir } from '../helpers/standalone.ts'
import { flakyStore } from '../helpers/flaky-store.ts'

const test = suite('RetryBuffer: work the store refused, kept in order, in memory then in a spill file')

test('items past the memory limit go to the spill file, and all are done in arrival order once the store answers', async () => {
  const dir = tempDir('zapgate-retry-')
  const { store, process } = flakyStore()
  const spill = new SpillFile(dir, 'test')
  const buffer = createRetryBuffer<number>({ what: 'numbers', process, logger: silentLogger, memoryLimit: 10, spill })
  await buffer.start()
  for (let i = 0; i < 250; i++) buffer.keep(i)
  assert.is(buffer.size, 250)
  assert.is(spill.size, 240, 'past the memory limit, items go to the file')
  await waitFor(() => existsSync(spill.path) && statSync(spill.path).size > 0, 2000, 'the overflow to reach the file')
  assert.is(statSync(spill.path).mode & 0o777, 0o600, 'the spill file is private')
  assert.is(statSync(dir).mode & 0o777, 0o700, 'so is its folder')
  store.down = false
  await waitFor(() => store.taken.length === 250, 10_000, 'every item')
  assert.equal(
    store.taken,
    Array.from({ length: 250 }, (_, i) => i),
  )
  assert.is(buffer.size, 0)
  // Deleted once all it held is done (21905b5), which ends the offer a tick after the last item is taken.
  await waitFor(() => readdirSync(dir).length === 0, 2000, 'the spill file to be deleted once all is done')
  assert.equal(readdirSync(dir), [], 'the spill file is deleted once read')
  await buffer.close()
})

test('close() with the store still down leaves every item in the spill file, memory first, and the next process replays them', async () => {
  const dir = tempDir('zapgate-retry-')
  const first = flakyStore()
  const buffer = createRetryBuffer<number>({ what: 'numbers', process: first.process, logger: silentLogger, memoryLimit: 3, spill: new SpillFile(dir, 'test') })
  await buffer.start()
  for (let i = 0; i < 8; i++) buffer.keep(i)
  await buffer.close()
  // As if this process had crashed: its file carries the pid of a process that is gone.
  const [file] = readdirSync(dir)
  const gone = spawnSync(process.execPath, ['-e', '0']).pid
  renameSync(join(dir, file!), join(dir, file!.replace(new RegExp(`-${process.pid}(?=[-.])`), `-${gone}`)))
  const { store, process: take } = flakyStore()
  store.down = false
  const next = createRetryBuffer<number>({ what: 'numbers', process: take, logger: silentLogger, spill: new SpillFile(dir, 'test') })
  await next.start()
  await waitFor(() => store.taken.length === 8, 5000, 'the replay')
  assert.equal(store.taken, [0, 1, 2, 3, 4, 5, 6, 7])
  await next.close()
})

test('a spill file of a process still alive on this host is left to it', async () => {
  const dir = tempDir('zapgate-retry-')
  const alive = join(dir, `test-${hostname().replace(/[^A-Za-z0-9.]/g, '_')}-1.jsonl`) // pid 1 is always alive
  writeFileSync(alive, '1\n2\n')
  const { store, process } = flakyStore()
  store.down = false
  const buffer = createRetryBuffer<number>({ what: 'numbers', process, logger: silentLogger, spill: new SpillFile(dir, 'test') })
  await buffer.start()
  await new Promise(resolve => setTimeout(resolve, 200))
  assert.equal(store.taken, [])
  assert.ok(readdirSync(dir).includes(alive.slice(dir.length + 1)))
  await buffer.close()
})

const own = ownStamp()
const withStartTimes =
  own.startTicks !== undefined && own.bootId ? test : (console.log('skipped: the reused-pid spill file test (needs /proc start times: Linux)'), test.skip)

withStartTimes('a spill file named by a live pid with another start time (the pid was reused) is taken over', async () => {
  const dir = tempDir('zapgate-retry-')
  // This process's pid, started one tick earlier: another process that had the same pid.
  writeFileSync(join(dir, `test-${hostname().replace(/[^A-Za-z0-9.]/g, '_')}-${own.pid}-${own.startTicks! - 1}-${own.bootId!.slice(0, 8)}.jsonl`), '1\n2\n')
  const { store, process } = flakyStore()
  store.down = false
  const buffer = createRetryBuffer<number>({ what: 'numbers', process, logger: silentLogger, spill: new SpillFile(dir, 'test') })
  await buffer.start()
  await waitFor(() => store.taken.length === 2, 5000, 'the replay')
  assert.equal(store.taken, [1, 2])
  await buffer.close()
})

test("a line cut short in a gone process's spill file (killed mid-append) is skipped: the others are replayed, nothing is thrown", async () => {
  const dir = tempDir('zapgate-retry-')
  const gone = spawnSync(globalThis.process.execPath, ['-e', '0']).pid
  writeFileSync(join(dir, `test-${hostname().replace(/[^A-Za-z0-9.]/g, '_')}-${gone}.jsonl`), '1\n2\n{"key":"d1:msg_cu')
  const rejections: unknown[] = []
  const onRejection = (reason: unknown) => void rejections.push(reason)
  globalThis.process.on('unhandledRejection', onRejection)
  try {
    const { store, process } = flakyStore()
    store.down = false
    const buffer = createRetryBuffer<number>({ what: 'numbers', process, logger: silentLogger, spill: new SpillFile(dir, 'test') })
    await buffer.start()
    await waitFor(() => store.taken.length === 2, 3000, 'the replay of the whole lines')
    await waitFor(() => buffer.size === 0, 3000, 'the cut line to be dropped')
    assert.equal(store.taken, [1, 2])
    assert.equal(rejections, [])
    await buffer.close()
  } finally {
    globalThis.process.off('unhandledRejection', onRejection)
  }
})

test("a gone process's spill file that cannot be taken over is logged and left for the next start: the others are replayed, and this process still spills", async () => {
  const dir = tempDir('zapgate-retry-')
  const host = hostname().replace(/[^A-Za-z0-9.]/g, '_')
  const gone = [spawnSync(globalThis.process.execPath, ['-e', '0']).pid, spawnSync(globalThis.process.execPath, ['-e', '0']).pid]
  // A copy that fails (an I/O error, a full disk) stands as a directory under a spill file's name (EISDIR); the other file is whole.
  // The failing one is taken first (files are taken in name order, leftovers of one file before it) and both in the same millisecond: the one it leaves must not stand in the other's way.
  const [failing, whole] = gone.map(pid => `test-${host}-${pid}.jsonl`).sort() as [string, string]
  mkdirSync(join(dir, failing))
  writeFileSync(join(dir, whole), '1\n2\n')
  const errors: { msg: string; file?: string }[] = []
  const logger = { ...silentLogger, error: (fields: { file?: string }, msg: string) => void errors.push({ msg, file: fields.file }) }
  const { store, process } = flakyStore()
  store.down = false
  const spill = new SpillFile(dir, 'test')
  const buffer = createRetryBuffer<number>({ what: 'numbers', process, logger, spill, memoryLimit: 1 })
  const now = Date.now
  Date.now = () => 1_700_000_000_000
  try {
    await buffer.start() // not thrown
  } finally {
    Date.now = now
  }
  await waitFor(() => store.taken.length === 2, 5000, 'the replay of the readable file')
  assert.equal(store.taken, [1, 2])
  assert.is(errors.length, 1)
  assert.match(errors[0]!.msg, /could not be taken over/)
  assert.ok(existsSync(errors[0]!.file!), 'the file it could not take over is kept, renamed as taken (the next start takes it over)')
  // This process's own spill file works: items past the memory limit while the store is down are spilled and done later.
  store.down = true
  for (const item of [3, 4, 5]) buffer.keep(item)
  await waitFor(() => spill.size > 0, 3000, 'an item spilled')
  store.down = false
  await buffer.offered(true)
  await waitFor(() => store.taken.length === 5, 5000, 'the spilled items')
  assert.equal(store.taken, [1, 2, 3, 4, 5])
  await buffer.close()
})

test('a spill file that cannot be read back for a while (an I/O error) is read again later: nothing is thrown out of the retry timer, nothing lost', async () => {
  const dir = tempDir('zapgate-retry-')
  const { store, process: take } = flakyStore()
  store.down = false
  class FailingOnce extends SpillFile {
    failures = 1
    override async read(max: number): Promise<unknown[]> {
      if (this.failures > 0 && this.failures--) throw Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' })
      return super.read(max)
    }
  }
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown) => unhandled.push(reason)
  process.on('unhandledRejection', onUnhandled)
  try {
    const spill = new FailingOnce(dir, 'test')
    const buffer = createRetryBuffer<number>({ what: 'numbers', process: take, logger: silentLogger, memoryLimit: 2, spill })
    await buffer.start()
    for (let i = 0; i < 5; i++) buffer.keep(i)
    assert.is(spill.size, 3)
    await waitFor(() => store.taken.length === 5, 10_000, 'every item, the spilled ones after the failed read')
    assert.equal(store.taken, [0, 1, 2, 3, 4])
    assert.is(spill.failures, 0, 'the read failed once')
    assert.equal(unhandled, [])
  } finally {
    process.off('unhandledRejection', onUnhandled)
  }
})

test('an item spilled while the last lines are read back (the file being emptied) is kept: read later, not deleted with the file', async () => {
  const dir = tempDir('zapgate-retry-')
  const spill = new SpillFile(dir, 'test')
  await spill.append([1])
  const realRm = fsPromises.rm
  fsPromises.rm = async (...args: Parameters<typeof realRm>) => {
    fsPromises.rm = realRm
    syncBuiltinESMExports()
    void spill.append([2]) // another item refused by the store, just as the emptied file is deleted
    await new Promise(resolve => setTimeout(resolve, 50))
    return realRm(...args)
  }
  syncBuiltinESMExports()
  assert.equal(await spill.read(10), [1])
  await spill.forgetRead() // [1] done
  assert.is(spill.size, 1)
  assert.equal(await spill.read(10), [2], 'the item spilled meanwhile is still there')
  assert.is(spill.size, 0)
})

test('large items spill past 64 MiB in memory, however few: 80 events of 1 MiB (inline media) do not all stay in memory, and all are done in order', async () => {
  const dir = tempDir('zapgate-retry-')
  const store = { down: true, taken: [] as number[] }
  const process = async (item: { n: number; body: string }) => {
    if (store.down) throw new Error('store down')
    store.taken.push(item.n)
  }
  const spill = new SpillFile(dir, 'test')
  const buffer = createRetryBuffer<{ n: number; body: string }>({ what: 'events', process, logger: silentLogger, memoryLimit: 10_000, spill })
  await buffer.start()
  const body = 'x'.repeat(2 ** 20)
  for (let n = 0; n < 80; n++) buffer.keep({ n, body })
  assert.is(buffer.size, 80)
  assert.ok(spill.size >= 80 - 64, `at most 64 MiB in memory (${80 - spill.size} items held)`)
  store.down = false
  await waitFor(() => store.taken.length === 80, 20_000, 'every item')
  assert.equal(
    store.taken,
    Array.from({ length: 80 }, (_, n) => n),
  )
  await buffer.close()
})

test('read back from the spill file, at most 64 MiB are held in memory at once: 100 spilled events of 1 MiB are done in order, a part at a time', async () => {
  const dir = tempDir('zapgate-retry-')
  const spill = new SpillFile(dir, 'test')
  const body = 'x'.repeat(2 ** 20)
  await spill.append(Array.from({ length: 100 }, (_, n) => ({ n, body }))) // as a gone process's file taken over at start
  const taken: number[] = []
  let held = 0
  const process = async (item: { n: number }) => void (taken.push(item.n), (held = Math.max(held, buffer.size - spill.size)))
  const buffer = createRetryBuffer<{ n: number; body: string }>({ what: 'events', process, logger: silentLogger, memoryLimit: 10_000, spill })
  await buffer.start()
  await waitFor(() => taken.length === 100, 20_000, 'every item')
  assert.equal(
    taken,
    Array.from({ length: 100 }, (_, n) => n),
  )
  assert.ok(held <= 64, `at most 64 MiB in memory (${held} items of 1 MiB held at once)`)
  await buffer.close()
})

test('a spill append that fails (a full disk) loses only its own items: later ones are spilled and done, and the buffer empties', async () => {
  const dir = tempDir('zapgate-retry-')
  const { store, process } = flakyStore()
  const errors: string[] = []
  const logger = { ...silentLogger, error: (_: object | string, msg?: string) => void errors.push(msg ?? '') }
  const spill = new SpillFile(dir, 'test')
  const buffer = createRetryBuffer<number>({ what: 'numbers', process, logger, memoryLimit: 1, spill })
  await buffer.start()
  buffer.keep(0)
  mkdirSync(spill.path) // the append fails, as on a full disk
  buffer.keep(1)
  await waitFor(() => errors.some(msg => msg.includes('spill file could not be written')), 2000, 'the failed append')
  rmdirSync(spill.path)
  buffer.keep(2)
  store.down = false
  await waitFor(() => store.taken.length === 2, 5000, 'the items kept')
  assert.equal(store.taken, [0, 2])
  await waitFor(() => buffer.size === 0, 5000, 'nothing left waiting')
  // Deleted right after the last item is done (an unlink the offer awaits once nothing waits): not yet at the moment size reads 0.
  await waitFor(() => readdirSync(dir).length === 0, 5000, 'the spill file deleted once read')
  await buffer.close()
})

test('without a spill file, items past the memory limit are lost (and the rest kept)', async () => {
  const { store, process } = flakyStore()
  const buffer = createRetryBuffer<number>({ what: 'numbers', process, logger: silentLogger, memoryLimit: 5 })
  for (let i = 0; i < 9; i++) buffer.keep(i)
  assert.is(buffer.size, 5)
  store.down = false
  await waitFor(() => store.taken.length === 5, 5000, 'the kept items')
  assert.equal(store.taken, [0, 1, 2, 3, 4])
  await buffer.close()
})

test('offered(true), when the store answers again, offers what waits at once; with nothing waiting, later items are still offered', async () => {
  const { store, process } = flakyStore()
  const buffer = createRetryBuffer<number>({ what: 'numbers', process, logger: silentLogger })
  store.down = false
  assert.is(await buffer.offered(true), true, 'nothing waits')
  store.down = true
  buffer.keep(1)
  assert.is(await buffer.offered(), false, 'no offer under way: a new item is kept at once')
  assert.is(await buffer.offered(true), false, 'the store still refuses')
  store.down = false
  assert.is(await buffer.offered(true), true, 'taken at once, not at the next retry (2 s)')
  assert.equal(store.taken, [1])
  buffer.keep(2)
  await waitFor(() => store.taken.length === 2, 5000, 'a later item, at its retry')
  await buffer.close()
})

test.run()
