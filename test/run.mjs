#!/usr/bin/env node
// Runs every test/**/*.test.ts, a few at a time, the longest first (test/durations.txt, order below),
// prints each file's output as it finishes, then the totals, alone on the last line:
// `N passed, N failed, N skipped`, from uvu's own summary of each file (uvu's `Total` leaves the
// skipped tests out: failed = Total - Passed).
//
// Where a file runs: TypeScript goes through the tests' loader (test/loader/register.mjs).
//   - Most files run in a shared process (test/run-shared.mjs), one after another, each as alone: the
//     modules they import load once per process instead of once per file (about 1 s of CPU a file on
//     a 2-core machine). A file that leaves anything behind (a server, a timer, a listener, a global)
//     is the last its process runs; `process.env` is put back after every file.
//   - In its own process, as before: the files that start processes and wait on leases or links
//     (heavy, below), and any file whose source says `test/run.mjs: own process` (with the reason).
//
// The run fails (exit 1), and each cause counts as one failed test when uvu counted none, when a file
//   - exits non-zero or is killed (a crash, a time-out, a failing test), or its process does,
//   - exits without uvu's summary, or with a summary of no test at all (its suites never ran),
//   - is focused: `.only(` in the file or in any project file it imports (its helpers, the shared
//     contract suites). uvu prints nothing for a focused test (the others only count as skipped),
//     so the runner reads the sources instead;
// and when no file matches.
//
// Usage: node test/run.mjs [--dir <folder>] [filter-substring ...]
//   --dir: where to look for *.test.ts (default test/); folders named `fixtures` are never entered.
//   TEST_CONCURRENCY (default: the CPU count, at least 2), TEST_FILE_TIMEOUT_MS (default 300000),
//   TEST_LINGER_MS: how long a file in its own process may run on after uvu's summary before the
//   runner makes it exit (default 3000; SIGUSR2, below: it exits with its own exit code, its `exit`
//   handlers run). TEST_SHARED=0: every file in its own process.
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { cpus } from 'node:os'

const root = new URL('..', import.meta.url).pathname
const { dir, filters } = parseArgs(process.argv.slice(2))
const files = walk(dir)
  .filter(f => f.endsWith('.test.ts'))
  .filter(f => filters.length === 0 || filters.some(s => f.includes(s)))
  .sort()
const concurrency = Number(process.env.TEST_CONCURRENCY ?? Math.max(2, cpus().length))
const timeoutMs = Number(process.env.TEST_FILE_TIMEOUT_MS ?? 300_000)
const lingerMs = Number(process.env.TEST_LINGER_MS ?? 3_000)
const sharing = process.env.TEST_SHARED !== '0'
/** Node's arguments before the script: the `source` export condition and the tests' TypeScript loader. */
const NODE_TS = ['--conditions=source', '--import', new URL('./loader/register.mjs', import.meta.url).href]
/** The line a shared process prints after each file (test/run-shared.mjs), followed by JSON and a newline. */
const DONE = '\u001ezapgate-test-file-done '
/** A file that must run in its own process says so (with why) in its source. */
const OWN_PROCESS = /test\/run\.mjs: own process\b/
let passed = 0
let failed = 0
let skipped = 0
/** Each failing file with why it failed. */
const failing = []

function parseArgs(args) {
  const at = args.indexOf('--dir')
  if (at === -1) return { dir: join(root, 'test'), filters: args }
  if (!args[at + 1]) throw new Error('--dir needs a folder')
  return { dir: resolve(args[at + 1]), filters: args.filter((_, i) => i !== at && i !== at + 1) }
}

/**
 * A file's expected seconds from the table at `path` (`<seconds> <path>` lines, `#` comments; a path
 * ending in `/` covers the files under it, the longest matching path wins; 5 s when none matches).
 */
function durations(path) {
  const rows = (existsSync(path) ? readFileSync(path, 'utf8') : '')
    .split('\n')
    .map(line => line.trim().match(/^(\d+(?:\.\d+)?)\s+(\S+)$/))
    .filter(Boolean)
    .map(m => ({ seconds: Number(m[1]), path: m[2] }))
  return file => {
    const rel = relative(root, file)
    const match = rows.filter(r => (r.path.endsWith('/') ? rel.startsWith(r.path) : rel === r.path)).sort((a, b) => b.path.length - a.path.length)[0]
    return match?.seconds ?? 5
  }
}

function walk(folder) {
  return readdirSync(folder).flatMap(name => {
    const path = join(folder, name)
    return statSync(path).isDirectory() ? (name === 'fixtures' || name === 'node_modules' ? [] : walk(path)) : [path]
  })
}

/** uvu's summary (the last one printed), or undefined when the file printed none. */
function summaryOf(out) {
  const all = [...out.matchAll(/^\s*Total:\s+(\d+)\s*\n\s*Passed:\s+(\d+)\s*\n\s*Skipped:\s+(\d+)\s*$/gm)]
  const last = all.at(-1)
  return last && { total: Number(last[1]), passed: Number(last[2]), skipped: Number(last[3]) }
}

/**
 * Preloaded into each file: SIGUSR2 (which no test sends) makes it exit as after its last line, with
 * uvu's exit code and its `exit` handlers run (temporary folders removed). The runner sends it.
 */
const EXIT_ON_SIGNAL = 'data:text/javascript,process.once("SIGUSR2",()=>process.exit())'

const FOCUS = /\b[\w$]+\s*\.only\s*\(/
const IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g
const focusCache = new Map()

/** Where `.only(` appears in `file` or in a project file it imports (relative imports, followed through), as `path:line`. */
function focusedIn(file, seen = new Set()) {
  if (seen.has(file)) return []
  seen.add(file)
  if (!focusCache.has(file)) {
    const source = existsSync(file) ? readFileSync(file, 'utf8') : ''
    const lines = source.split('\n').flatMap((line, i) => (FOCUS.test(line) ? [`${relative(root, file)}:${i + 1}`] : []))
    const imports = [...source.matchAll(IMPORT)].map(m => resolve(dirname(file), m[1])).filter(f => /\.[mc]?[jt]s$/.test(f))
    focusCache.set(file, { lines, imports })
  }
  const { lines, imports } = focusCache.get(file)
  return [...lines, ...imports.flatMap(f => focusedIn(f, seen))]
}

/** The files running now; interrupted, the runner takes their process groups down with it. */
const running = new Set()
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of running) killGroup(child)
    process.exit(130)
  })
}

/** SIGKILL to a file's process group: a timed-out file and whatever it left running (a SIGKILLed file's children were orphaned and kept the store busy). */
function killGroup(child) {
  try {
    process.kill(-child.pid, 'SIGKILL')
  } catch {
    // The group is gone already.
  }
}

/** Count a finished file and print its output: `out`, how its process ended, and whether the runner ended it. */
function report(file, { out, started, code, signal, timedOut = false, ended = false, shared = false }) {
  const summary = summaryOf(out)
  const reasons = []
  let bad = 0
  if (summary) {
    passed += summary.passed
    skipped += summary.skipped
    bad = summary.total - summary.passed
  }
  if (timedOut) reasons.push(`timed out after ${timeoutMs} ms`)
  // Ended by the runner: a file already tearing down when SIGUSR2 came (its handler gone) dies of it; uvu's summary judges it.
  else if (code !== 0 && !(ended && signal === 'SIGUSR2')) reasons.push(signal ? `killed by ${signal}` : `exit ${code}`)
  // uvu counts a suite whose `before` hook threw as that many tests not passed, shows no error and exits 0.
  if (bad > 0 && reasons.length === 0)
    reasons.push(`${bad} of ${summary.total} tests not passed${code === 0 ? ", yet exit 0 (a suite's before hook threw: uvu shows no error)" : ''}`)
  if (!summary) reasons.push('no uvu summary (a suite never ran, or the file stopped before uvu finished)')
  else if (summary.total === 0 && summary.skipped === 0) reasons.push('no test ran or was skipped')
  const focused = [...new Set(focusedIn(file))]
  if (focused.length) reasons.push(`focused with .only at ${focused.join(', ')}`)
  if (reasons.length && bad === 0) bad = 1
  failed += bad
  if (reasons.length) failing.push(`${relative(root, file)}: ${reasons.join('; ')}`)
  const secs = ((Date.now() - started) / 1000).toFixed(1)
  const end = ended ? `, ended ${lingerMs / 1000} s after its summary` : ''
  const where = shared ? ', in a shared process' : ''
  process.stdout.write(`\n## ${relative(root, file)} (${secs}s, exit ${code ?? signal}${end}${where})\n${out.trimEnd()}\n`)
}

/** Run `file` in a process of its own. */
function runAlone(file) {
  return new Promise(done => {
    const started = Date.now()
    const child = spawn(process.execPath, [...NODE_TS, '--import', EXIT_ON_SIGNAL, file], {
      cwd: root,
      env: { ...process.env, FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: what the file started (servers, instances) goes with it when it is killed or ends.
      detached: true,
    })
    running.add(child)
    let out = ''
    let timedOut = false
    // After uvu's summary the file has nothing left to say: a library's timer still pending (Baileys
    // leaves a 30 s one after each pre-key upload, 60 s for a query cut short) would keep it alive.
    let lingering
    let ended = false
    const read = d => {
      out += d
      if (!lingering && summaryOf(out)) lingering = setTimeout(() => ((ended = true), child.kill('SIGUSR2')), lingerMs)
    }
    child.stdout.on('data', read)
    child.stderr.on('data', read)
    const timer = setTimeout(() => ((timedOut = true), killGroup(child)), timeoutMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      running.delete(child)
      killGroup(child)
      clearTimeout(lingering)
      report(file, { out, started, code, signal, timedOut, ended })
      done()
    })
  })
}

/** A shared process (test/run-shared.mjs): `run(file)` runs one file in it; `end()` lets it exit. `alive` is false once it has exited. */
function startShared() {
  const child = spawn(process.execPath, [...NODE_TS, join(root, 'test/run-shared.mjs')], {
    cwd: root,
    env: { ...process.env, FORCE_COLOR: '0' },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  })
  running.add(child)
  const shared = { alive: true, run, end: () => child.stdin.end() }
  let out = ''
  /** The file running now: its name, start, time-out and the callback its promise resolves with. */
  let current
  const read = d => {
    out += d
    const at = out.indexOf(DONE)
    const eol = at === -1 ? -1 : out.indexOf('\n', at)
    if (eol === -1 || !current) return
    const { code } = JSON.parse(out.slice(at + DONE.length, eol))
    const { file, started, timer, done } = current
    current = undefined
    clearTimeout(timer)
    report(file, { out: out.slice(0, at), started, code, signal: null, shared: true })
    out = out.slice(eol + 1)
    done()
  }
  child.stdout.on('data', read)
  child.stderr.on('data', read)
  child.stdin.on('error', () => {}) // it exited; 'close' tells the file's fate
  child.on('close', (code, signal) => {
    shared.alive = false
    running.delete(child)
    killGroup(child)
    if (!current) return
    const { file, started, timer, done, timedOut } = current
    current = undefined
    clearTimeout(timer)
    report(file, { out, started, code, signal, timedOut: timedOut(), shared: true })
    done()
  })
  function run(file) {
    return new Promise(done => {
      let timedOut = false
      const timer = setTimeout(() => ((timedOut = true), killGroup(child)), timeoutMs)
      current = { file, started: Date.now(), timer, done, timedOut: () => timedOut }
      child.stdin.write(`${relative(root, file)}\n`)
    })
  }
  return shared
}

// Longest first (test/durations.txt), so that no long file starts last and runs alone at the end.
// Files that start processes and wait on leases or links (heavy; test/docs/commands too: it starts
// every documented server through npm and tsx, 60 s each at most) would crowd the cores together: a
// free worker takes the longest heavy file only while fewer than `concurrency - 1` heavy files run
// (one slot at least for the others), else the longest other file, else (only heavy ones left) the
// longest heavy file.
const isHeavy = f => /\/(examples|real-stack|faults)\/|conformance\/real-stack|docs\/commands\.test/.test(f)
const estimate = durations(join(root, 'test', 'durations.txt'))
const pending = [...files].sort((a, b) => estimate(b) - estimate(a))
const heavyCap = Math.max(1, concurrency - 1)
let heavyRunning = 0
function next() {
  const at = pending.findIndex(f => !isHeavy(f) || heavyRunning < heavyCap)
  return pending.splice(at === -1 ? 0 : at, 1)[0]
}
const sharedProcesses = []
await Promise.all(
  Array.from({ length: Math.min(concurrency, pending.length) }, async () => {
    let shared
    for (let file = next(); file; file = next()) {
      const heavy = isHeavy(file)
      if (heavy) heavyRunning++
      if (!sharing || heavy || OWN_PROCESS.test(readFileSync(file, 'utf8'))) await runAlone(file)
      else {
        if (!shared?.alive) sharedProcesses.push((shared = startShared()))
        await shared.run(file)
      }
      if (heavy) heavyRunning--
    }
  }),
)
for (const shared of sharedProcesses) if (shared.alive) shared.end()
if (files.length === 0) {
  failing.push(`no test file under ${relative(root, dir) || '.'} matches ${filters.join(' ') || '*.test.ts'}`)
  failed += 1
}
if (failing.length) console.log(`\nFailing:\n  ${failing.join('\n  ')}`)
console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`)
process.exit(failed === 0 && failing.length === 0 ? 0 : 1)
