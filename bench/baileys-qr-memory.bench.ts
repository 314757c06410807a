/**
 * baileys-qr-memory: memory per device of the Baileys transport on the real Baileys stack (default
 * socket factory, Noise handshake, binary nodes) against the local WhatsApp peer (adapters/
 * wa-peer), for 200 devices waiting at the QR stage. The transport runs alone in its own
 * process (bench/servers/baileys-qr.mjs, the compiled package); the peer runs here. Heap and RSS are
 * read at rest (after full GCs) once one device is linked (baseline: Baileys loaded, every path
 * warm) and again with 200 more; the figure is the difference divided by 200. No target: the
 * gateway's other memory figure (devices-memory) covers the memory transport; this one says what a
 * real session costs, which is what sizing a server for N devices needs. The peer speaks ws:// on
 * loopback: a real session also holds a TLS connection (some tens of KB more).
 */
import { spawn } from 'node:child_process'
import { startWaPeer } from '../adapters/wa-peer/index.ts'
import { root } from './lib/process.ts'
import { note, report } from './lib/report.ts'

const DEVICES = 200
const KB = 1024
const MB = 2 ** 20

const peer = await startWaPeer({ qrRefs: ['REF-1', 'REF-2'] })
try {
  const child = spawn(process.execPath, ['--expose-gc', 'bench/servers/baileys-qr.mjs'], {
    cwd: root,
    env: { ...process.env, BENCH_WA_URL: peer.url, BENCH_WA_ROOT: peer.rootPublicKey.toString('base64'), BENCH_DEVICES: String(DEVICES) },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let output = ''
  child.stdout.on('data', chunk => (output += chunk))
  const code = await new Promise<number | null>(resolve => child.once('exit', resolve))
  const line = output.split('\n').find(l => l.startsWith('RESULT '))
  if (code !== 0 || !line) throw new Error(`baileys-qr.mjs exited with ${code}:\n${output}`)
  const { devices, linking, linkSeconds, before, after } = JSON.parse(line.slice(7))
  if (linking !== devices) throw new Error(`only ${linking} of ${devices} devices were at the QR stage`)
  note(
    `${devices} devices linked to the QR stage in ${linkSeconds.toFixed(1)} s against the local peer (${peer.records.payloads.length} registrations, ${peer.stats.upgrades} upgrades)`,
  )
  note(
    `at rest: heap ${(before.heapUsed / MB).toFixed(1)} -> ${(after.heapUsed / MB).toFixed(1)} MB, RSS ${(before.rss / MB).toFixed(1)} -> ${(after.rss / MB).toFixed(1)} MB, external ${(before.external / MB).toFixed(1)} -> ${(after.external / MB).toFixed(1)} MB`,
  )
  const perDevice = (field: 'heapUsed' | 'rss') => (after[field] - before[field]) / devices / KB
  report({
    name: 'baileys-qr-heap-per-device',
    value: perDevice('heapUsed'),
    unit: 'KB',
    baseline: before.heapUsed / MB,
    baselineUnit: 'MB (heap with one device)',
  })
  report({ name: 'baileys-qr-rss-per-device', value: perDevice('rss'), unit: 'KB', baseline: before.rss / MB, baselineUnit: 'MB (RSS with one device)' })
} finally {
  await peer.close()
}
