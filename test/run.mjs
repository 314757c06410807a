#!/usr/bin/env node
// Runs every test/**/*.test.ts in its own Node process (tsx loader), two at a time, prints each
// file's output as it finishes, then one totals line: `N passed, N failed`.
// Usage: node test/run.mjs [filter-substring ...]
import { spawn } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { cpus } from 'node:os'

const root = new URL('..', import.meta.url).pathname
const filters = process.argv.slice(2)
const files = walk(join(root, 'test'))
  .filter(f => f.endsWith('.test.ts'))
  .filter(f => filters.length === 0 || filters.some(s => f.includes(s)))
  .sort()
const concurrency = Number(process.env.TEST_CONCURRENCY ?? Math.max(2, cpus().length))
let passed = 0
let failed = 0
let skipped = 0
const crashed = []

function walk(dir) {
  return readdirSync(dir).flatMap(name => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? (name === 'fixtures' ? [] : walk(path)) : [path]
  })
}

function runFile(file) {
  return new Promise(resolve => {
    const started = Date.now()
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', file], {
      cwd: root,
      env: { ...process.env, FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', d => (out += d))
    child.stderr.on('data', d => (out += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), Number(process.env.TEST_FILE_TIMEOUT_MS ?? 300_000))
    child.on('close', code => {
      clearTimeout(timer)
      const total = Number(/Total:\s+(\d+)/.exec(out)?.[1] ?? 0)
      const ok = Number(/Passed:\s+(\d+)/.exec(out)?.[1] ?? 0)
      const skip = Number(/Skipped:\s+(\d+)/.exec(out)?.[1] ?? 0)
      passed += ok
      skipped += skip
      let bad = total - ok - skip
      if (code !== 0 && bad === 0) bad = 1 // crashed or timed out before uvu could count
      failed += bad
      if (code !== 0) crashed.push(relative(root, file))
      const secs = ((Date.now() - started) / 1000).toFixed(1)
      process.stdout.write(`\n## ${relative(root, file)} (${secs}s, exit ${code})\n${out.trimEnd()}\n`)
      resolve()
    })
  })
}

const queue = [...files]
await Promise.all(
  Array.from({ length: Math.min(concurrency, queue.length) }, async () => {
    while (queue.length) await runFile(queue.shift())
  }),
)
if (crashed.length) console.log(`\nFailing files:\n  ${crashed.join('\n  ')}`)
if (skipped) console.log(`\n${skipped} skipped`)
console.log(`\n${passed} passed, ${failed} failed`)
process.exit(failed === 0 && files.length > 0 ? 0 : 1)
