import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { processAlive } from '../../src/store/process-alive.ts'

/**
 * test/run.mjs, the runner of `npm test`, over the fixture files in fixtures/runner/ (a folder named
 * `fixtures`, which the runner never enters on its own): its exit code and its closing line, which
 * must be the last line of its output, whatever the files do.
 */
const test = suite('test/run.mjs: the count cannot lie')

const root = new URL('../..', import.meta.url).pathname

/** Run the runner over the fixtures whose names contain one of `names`, with CI unset; its exit code and closing line. */
function runner(...names: string[]): { code: number | null; closing: string; output: string } {
  return runnerIn({ CI: '' }, ...names)
}

/** The same with `env` added to this process's environment. */
function runnerIn(env: Record<string, string>, ...names: string[]): { code: number | null; closing: string; output: string } {
  const result = spawnSync(process.execPath, ['test/run.mjs', '--dir', 'test/structure/fixtures/runner', ...names.map(name => `/${name}.test.ts`)], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, TEST_CONCURRENCY: '1', ...env },
    timeout: 60_000,
  })
  const output = result.stdout + result.stderr
  return { code: result.status, closing: result.stdout.trimEnd().split('\n').at(-1) ?? '', output }
}

test('passing files: exit 0, every test counted as passed', () => {
  const run = runner('pass')
  assert.is(run.closing, '2 passed, 0 failed, 0 skipped', run.output)
  assert.is(run.code, 0, run.output)
})

test('a skipped test counts as skipped, not as passed, and does not fail the run', () => {
  const run = runner('skip')
  assert.is(run.closing, '1 passed, 0 failed, 1 skipped', run.output)
  assert.is(run.code, 0, run.output)
})

test("a real failure beside a skipped test still fails the run (uvu's Total leaves skipped tests out)", () => {
  const run = runner('fail', 'skip')
  assert.is(run.closing, '1 passed, 1 failed, 1 skipped', run.output)
  assert.is(run.code, 1, run.output)
})

test('a file that crashes before uvu counts fails the run, even beside a skipped test', () => {
  const run = runner('crash', 'skip')
  assert.is(run.closing, '1 passed, 1 failed, 1 skipped', run.output)
  assert.is(run.code, 1, run.output)
  assert.match(run.output, /crash\.test\.ts: exit 1; no uvu summary/)
})

test("a file that exits 0 without uvu's summary (its suite never ran) fails the run", () => {
  const run = runner('silent')
  assert.is(run.closing, '0 passed, 1 failed, 0 skipped', run.output)
  assert.is(run.code, 1, run.output)
  assert.match(run.output, /silent\.test\.ts: no uvu summary/)
})

test('a suite whose before hook throws (uvu counts its tests as not passed, prints no error and exits 0) is named among the failing files', () => {
  const run = runner('before-hook')
  assert.is(run.closing, '0 passed, 2 failed, 0 skipped', run.output)
  assert.is(run.code, 1, run.output)
  assert.match(run.output, /Failing:\n {2}test\/structure\/fixtures\/runner\/before-hook\.test\.ts: 2 of 2 tests not passed, yet exit 0/)
})

test('a focused test fails the run, though uvu prints it as passed with the other test skipped', () => {
  const run = runner('focused')
  assert.is(run.closing, '1 passed, 1 failed, 1 skipped', run.output)
  assert.is(run.code, 1, run.output)
  assert.match(run.output, /focused\.test\.ts: focused with \.only at test\/structure\/fixtures\/runner\/focused\.test\.ts:6/)
})

test('a test needing a missing service prints what it needs and counts as skipped; with CI=true it fails', () => {
  const local = runner('needs')
  assert.is(local.closing, '0 passed, 0 failed, 1 skipped', local.output)
  assert.is(local.code, 0, local.output)
  assert.match(local.output, 'skipped: the fixture suite (needs a service no machine has: there is no way)')
  const ci = runnerIn({ CI: 'true' }, 'needs')
  assert.is(ci.closing, '0 passed, 1 failed, 0 skipped', ci.output)
  assert.is(ci.code, 1, ci.output)
  assert.match(ci.output, 'CI=true, and the fixture suite cannot run')
})

test("a file still running after uvu's summary is made to exit then, its exit handlers run, counted by its summary", () => {
  const started = Date.now()
  const run = runnerIn({ CI: '', TEST_LINGER_MS: '500' }, 'linger')
  assert.is(run.closing, '1 passed, 0 failed, 0 skipped', run.output)
  assert.is(run.code, 0, run.output)
  assert.match(run.output, /linger\.test\.ts \([\d.]+s, exit 0, ended 0\.5 s after its summary\)/)
  assert.ok(Date.now() - started < 30_000, 'not kept for its 60 s timer')
  assert.match(run.output, 'linger: exit handler ran')
})

test('no file matching fails the run', () => {
  const run = runner('no-such-fixture')
  assert.is(run.closing, '0 passed, 1 failed, 0 skipped', run.output)
  assert.is(run.code, 1, run.output)
})

test('a file killed at its time-out takes the processes it started with it (its process group)', () => {
  const run = runnerIn({ CI: '', TEST_FILE_TIMEOUT_MS: '3000' }, 'orphan')
  assert.match(run.output, /orphan\.test\.ts: timed out after 3000 ms/)
  const pid = Number(/orphan: child pid (\d+)/.exec(run.output)?.[1])
  assert.ok(pid > 0, run.output)
  assert.is(alive(pid), false, `the child ${pid} outlived its file`)
})

/** Whether `pid` runs (a zombie does not count), polled up to 2 s (a killed process may stay a zombie until reaped). */
function alive(pid: number): boolean {
  const until = Date.now() + 2_000
  while (processAlive(pid) && Date.now() < until) spawnSync('sleep', ['0.1'])
  return processAlive(pid)
}

/** The pid each shared-N fixture printed, by N. */
function pids(output: string): Record<string, number> {
  return Object.fromEntries([...output.matchAll(/shared-(\d): pid (\d+)/g)].map(m => [m[1], Number(m[2])]))
}

test('files share a process one after another, with process.env put back after each; one that leaves a timer or replaces a global or a built-in method is the last of its process, whose exit handlers run', () => {
  const run = runner('shared-1-env', 'shared-2-clean', 'shared-3-leak', 'shared-4-after')
  assert.is(run.closing, '4 passed, 0 failed, 0 skipped', run.output)
  assert.is(run.code, 0, run.output)
  const pid = pids(run.output)
  assert.is(pid[2], pid[1], run.output)
  assert.is(pid[3], pid[1], run.output)
  assert.is.not(pid[4], pid[3], run.output)
  assert.match(run.output, 'this process ends after this file: 1 Timeout left running, global escape replaced, Math.random replaced')
  assert.match(run.output, 'shared-3: exit handler ran')
  assert.match(run.output, /shared-4-after\.test\.ts \([\d.]+s, exit 0, in a shared process\)/)
})

test("a suite queued after uvu ran the file's others (its .run() behind a timer) still runs and counts, shared or not", () => {
  for (const shared of ['1', '0']) {
    const run = runnerIn({ CI: '', TEST_SHARED: shared }, 'late-run')
    assert.match(run.closing, / 1 failed, 0 skipped$/, run.output)
    assert.is(run.code, 1, run.output)
    assert.match(run.output, 'the late suite fails', run.output)
  }
})

test('with TEST_SHARED=0 every file runs in its own process', () => {
  const run = runnerIn({ CI: '', TEST_SHARED: '0' }, 'shared-1-env', 'shared-2-clean')
  assert.is(run.closing, '2 passed, 0 failed, 0 skipped', run.output)
  const pid = pids(run.output)
  assert.is.not(pid[2], pid[1], run.output)
})

test.run()
