// A shared process of test/run.mjs: it runs test files one after another, each read from a line of its
// stdin, so that the modules they import (src/, Koa, got, the adapters) are loaded and compiled once
// rather than once a file. A file runs as alone: uvu's queue is emptied before it and run after it
// (uvu's own way: UVU_DEFER, as its CLI), and what it changed in the process is put back
// (`process.env`) or, where it cannot be, ends the process:
//   - a file that leaves anything running (a server, a socket, a timer, a child process: Node's active
//     resources after its tests, beyond this process's own stdio), adds a `process` listener other
//     than for `exit`, replaces or removes a global (a fake clock, a patched `fetch`), a console
//     method (a log filter left installed) or a patched built-in (PATCHED: Date.now, Math.random...),
//     or changes the working folder, is the last this process runs: it exits with the file's exit code (its `exit`
//     handlers run, as when a file runs in its own process), and the runner starts a fresh one for the
//     next file;
//   - a file that throws while loading, or calls `process.exit`, ends the process as it would its own.
// Allowed to stay: `exit` listeners (a file's clean-up of its temporary folders runs when the process
// ends, as before) and added globals (a module's own, set as it loads, once a process: undici's
// dispatcher, zod's registry). Node's lazy globals (AbortController, Blob...) turn from getters into
// values when first read: all are read before the first file, so that only a file's own change counts.
// After a file that leaves the process clean, a line `RS zapgate-test-file-done {"code":N}` (RS is
// U+001E) on stdout tells the runner the file is done, with uvu's exit code; the next line of stdin is
// the next file. A file's stderr goes to stdout, so that all a file printed comes before that line.
import { EventEmitter } from 'node:events'
import { createInterface } from 'node:readline'
import { pathToFileURL } from 'node:url'

/** The line that ends a file's output, followed by JSON (test/run.mjs looks for the same). */
const DONE = '\u001ezapgate-test-file-done '

globalThis.UVU_DEFER = 1
const { exec } = await import('uvu')
const queue = globalThis.UVU_QUEUE
const toStdout = process.stdout.write.bind(process.stdout)
process.stderr.write = (chunk, ...rest) => toStdout(chunk, ...rest)
process.setMaxListeners(0) // the `exit` listeners of the files run so far stay
for (const key of Reflect.ownKeys(globalThis)) {
  try {
    void globalThis[key]
  } catch {
    // A getter that throws changes nothing.
  }
}

/** Properties of built-ins that tests patch (fake clocks, seeded randomness, captured output): each [object, name, label]. */
const PATCHED = [
  [Date, 'now', 'Date.now'],
  [Math, 'random', 'Math.random'],
  [performance, 'now', 'performance.now'],
  [process, 'hrtime', 'process.hrtime'],
  [process.hrtime, 'bigint', 'process.hrtime.bigint'],
  [process, 'exit', 'process.exit'],
  [process, 'emitWarning', 'process.emitWarning'],
  [process.stdout, 'write', 'process.stdout.write'],
  [process.stderr, 'write', 'process.stderr.write'],
  [Error, 'prepareStackTrace', 'Error.prepareStackTrace'],
  [Error, 'stackTraceLimit', 'Error.stackTraceLimit'],
  [EventEmitter, 'defaultMaxListeners', 'EventEmitter.defaultMaxListeners'],
]

/** What a file could change in this process and must not leave changed. */
function snapshot() {
  const globals = new Map(Reflect.ownKeys(globalThis).map(key => [key, Object.getOwnPropertyDescriptor(globalThis, key)]))
  const listeners = new Map(process.eventNames().map(name => [name, process.listenerCount(name)]))
  const consoleMethods = new Map(Object.keys(console).map(name => [name, console[name]]))
  const patched = PATCHED.map(([object, name]) => object[name])
  return { env: { ...process.env }, cwd: process.cwd(), globals, listeners, consoleMethods, patched, resources: process.getActiveResourcesInfo() }
}

const sameDescriptor = (a, b) => Object.is(a.value, b.value) && a.get === b.get && a.set === b.set

/** Why the process is not as `before` found it (empty: it is). */
function changesSince(before) {
  const now = snapshot()
  const changes = []
  const counts = list => list.reduce((map, name) => map.set(name, (map.get(name) ?? 0) + 1), new Map())
  const was = counts(before.resources)
  for (const [name, count] of counts(now.resources)) if (count > (was.get(name) ?? 0)) changes.push(`${count - (was.get(name) ?? 0)} ${name} left running`)
  for (const [name, count] of now.listeners)
    if (name !== 'exit' && count > (before.listeners.get(name) ?? 0)) changes.push(`a process '${String(name)}' listener added`)
  for (const [key, descriptor] of now.globals) {
    const old = before.globals.get(key)
    if (old && !sameDescriptor(old, descriptor)) changes.push(`global ${String(key)} replaced`)
  }
  for (const key of before.globals.keys()) if (!now.globals.has(key)) changes.push(`global ${String(key)} removed`)
  for (const [name, method] of now.consoleMethods) if (before.consoleMethods.get(name) !== method) changes.push(`console.${name} replaced`)
  PATCHED.forEach(([, , label], i) => Object.is(now.patched[i], before.patched[i]) || changes.push(`${label} replaced`))
  if (now.cwd !== before.cwd) changes.push(`working folder changed to ${now.cwd}`)
  return changes
}

/** Put `process.env` back as it was in `before`. */
function restoreEnv(before) {
  for (const key of Object.keys(process.env)) if (!(key in before.env)) delete process.env[key]
  for (const [key, value] of Object.entries(before.env)) if (process.env[key] !== value) process.env[key] = value
}

/** Changes still there after up to `ms` (a socket or a server closed by a test's last hook may take a few turns of the loop). */
async function settledChanges(before, ms) {
  const until = Date.now() + ms
  for (;;) {
    await new Promise(resolve => setTimeout(resolve, 10))
    const changes = changesSince(before)
    if (changes.length === 0 || Date.now() >= until) return changes
  }
}

const lines = createInterface({ input: process.stdin })
for await (const file of lines) {
  if (!file) continue
  const before = snapshot()
  queue.length = 0
  queue.push([null])
  process.exitCode = undefined
  try {
    await import(pathToFileURL(file).href)
  } catch (error) {
    console.error(error)
    process.exit(1)
  }
  // Files that never call `.run()` print no summary, as in their own process (the runner fails them).
  // A suite whose `.run()` comes after uvu ran the others (behind a timer or a promise) runs in a
  // further round, as uvu's deferred run does in a process of its own (a further summary, the last).
  let code = 0
  let changes
  do {
    if (queue[0].length > 1) {
      await exec()
      code ||= process.exitCode ?? 0
      queue.length = 0
      queue.push([null])
    }
    restoreEnv(before)
    changes = await settledChanges(before, 200)
  } while (queue[0].length > 1)
  if (changes.length) {
    console.log(`(test/run-shared.mjs: this process ends after this file: ${changes.join(', ')})`)
    process.exit(code)
  }
  process.exitCode = undefined
  await new Promise(resolve => toStdout(`\n${DONE}${JSON.stringify({ code })}\n`, resolve))
}
