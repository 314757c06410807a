// `npm run bench [-- name ...]`: run every bench/*.bench.ts (or those whose file name contains one of
// the names) one after the other, each in its own Node process, echo their output, then print the
// summary: every `bench ...` line again and how many passed, failed or only report.
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import os from 'node:os'

const root = new URL('..', import.meta.url).pathname
const filters = process.argv.slice(2)
const files = readdirSync(`${root}bench`)
  .filter(file => file.endsWith('.bench.ts'))
  .filter(file => filters.length === 0 || filters.some(filter => file.includes(filter)))
  .sort()
const machine = `${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`
console.log(`benchmarks: ${files.join(', ')}\nmachine: ${machine}\n`)

// The servers import the compiled package, as an app using the library does: build it first.
const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' })
if (build.status !== 0) {
  console.error('npm run build failed')
  process.exit(1)
}

const lines = []
const broken = []
for (const file of files) {
  console.log(`## ${file}`)
  const started = Date.now()
  const run = spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', `bench/${file}`], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
  })
  process.stdout.write(run.stdout ?? '')
  lines.push(...(run.stdout ?? '').split('\n').filter(line => line.startsWith('bench ')))
  if (run.status !== 0) broken.push(`${file} exited with ${run.status ?? run.signal}`)
  console.log(`(${((Date.now() - started) / 1000).toFixed(0)} s)\n`)
}

const count = verdict => lines.filter(line => line.endsWith(`| ${verdict}`)).length
console.log(`## summary (${machine})`)
for (const line of lines) console.log(line)
for (const problem of broken) console.log(`broken: ${problem}`)
console.log(`${count('PASS')} passed, ${count('FAIL')} failed, ${count('REPORT')} reported${broken.length ? `, ${broken.length} benchmarks broken` : ''}`)
process.exitCode = count('FAIL') > 0 || broken.length > 0 ? 1 : 0
