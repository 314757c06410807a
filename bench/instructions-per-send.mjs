/**
 * Instructions per request of a bench server, counted by valgrind's callgrind: `node
 * bench/instructions-per-send.mjs [root] [gateway.mjs|bare-koa.mjs] [counted] [warm-up]` (root: a copy
 * of the package with its own `dist/` and `bench/servers/`, as bench/compare-builds.ts takes; default
 * this checkout, built with `npm run build`; defaults gateway.mjs, 4,000 counted, 4,000 to warm up).
 *
 * The server runs under callgrind with its counting off; one account and a linked device are made
 * (gateway.mjs), the warm-up sends go, counting is switched on (`callgrind_control -i on`) for the
 * counted sends only (autocannon, 10 connections, the send-text bench's body), then off. Node runs
 * with V8's `--predictable` (one thread, no time-based heuristics): without it, a server slowed fifty
 * times by valgrind let V8's memory reducer and idle tasks run as if it were idle, and the count of
 * one build moved from 203,000 to 364,000 between runs. With it, runs of one build agree within 2 %
 * (253,920 and 254,382; 250,207 and 254,926).
 *
 * What it is for, and what not: a count that two builds compare by without this shared VM's noise
 * (a change of 3 % in CPU per request is lost in the send-text bench's rounds). It counts user-space
 * instructions only, not what they cost: the gateway's instructions run at about a third of bare
 * Koa's rate (cache and branch misses of a larger code path), so 474625a's build counted 0.96 of
 * the instructions of the build before where its CPU per request fell to 0.86 (bench/README.md,
 * "Instructions are not time"). Not part of `npm run bench`; needs valgrind (on every machine kind).
 */
import { execFileSync, spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const [root = fileURLToPath(new URL('..', import.meta.url)), script = 'gateway.mjs', counted = '4000', warmUp = '4000'] = process.argv.slice(2)
const autocannon = createRequire(`${root}/package.json`)('autocannon')
const child = spawn(
  'valgrind',
  [
    '--tool=callgrind',
    '--instr-atstart=no',
    '--callgrind-out-file=/dev/null',
    '--smc-check=all-non-file',
    process.execPath,
    '--predictable',
    `bench/servers/${script}`,
  ],
  { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PORT: '0' } },
)
let report = ''
child.stderr.on('data', chunk => (report += chunk))
const port = await new Promise((resolve, reject) => {
  let out = ''
  child.stdout.on('data', chunk => {
    const ready = /READY (\d+)/.exec((out += chunk))
    if (ready) resolve(Number(ready[1]))
  })
  child.once('exit', code => reject(new Error(`the server exited (${code}) before READY:\n${report.slice(-2000)}`)))
})
const url = `http://127.0.0.1:${port}`
const post = async (path, body) =>
  (await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()

let body = { appkey: 'bench-0', authkey: 'x'.repeat(32), to: '5511988887777', message: 'Olá! Seu pedido 1234 saiu para entrega.' }
if (script === 'gateway.mjs') {
  const registered = await post('/api/auth', {
    auth: 'registrar',
    nome: 'Bench',
    email: 'bench@example.com',
    senha: 'senha-bench',
    telefone: '5511900000000',
    plano: '1',
  })
  const created = await post('/api/v2/qrcode', { authkey: registered.data.authkey, setAppkey: 'bench-0' })
  await post('/_sim/scan', { authkey: registered.data.authkey, appkey: created.appkey, phone: '5511910000000' })
  body = { ...body, authkey: registered.data.authkey, appkey: created.appkey }
}
const sends = async amount => {
  const result = await autocannon({
    url: `${url}/api/create-message`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    connections: 10,
    amount: Number(amount),
    timeout: 120,
  })
  if (result.non2xx || result.errors) throw new Error(`${result.non2xx} answers not 2xx, ${result.errors} errors`)
}
await sends(warmUp)
execFileSync('callgrind_control', ['-i', 'on', String(child.pid)], { stdio: 'ignore' })
await sends(counted)
execFileSync('callgrind_control', ['-i', 'off', String(child.pid)], { stdio: 'ignore' })
child.kill('SIGTERM')
await new Promise(resolve => child.once('exit', resolve))
const total = Number(/Collected : (\d+)/.exec(report)?.[1])
if (!total) throw new Error(`no count in callgrind's report:\n${report.slice(-2000)}`)
console.log(`${script} (${root}): ${counted} sends counted after ${warmUp}: ${Math.round(total / Number(counted))} instructions each`)
