/**
 * baileys-linked: what linked devices cost on the real Baileys stack, against the local WhatsApp
 * peer (adapters/wa-peer). The Baileys transport runs alone in its own process
 * (bench/servers/baileys-linked.mjs, the compiled package, a SQLite store); the peer and its phones
 * run here. BENCH_LINKED_DEVICES devices (default 100) are linked by QR, each to a phone of its own.
 *
 * - memory per linked device at rest: heap and RSS (after full GCs) with one device linked (Baileys
 *   and every path warm) and again with all of them, the difference divided by their count; target
 *   at most 3 MB RSS per device (issue 23; WAHA publishes about 60 MB per Baileys session);
 * - CPU per message: one round in which every device sends a text to a phone (usync, key bundle,
 *   pkmsg, the phone decrypts) and receives one from it (decrypt, receipt); the process CPU time of
 *   the round divided by the messages (a message a minute per device, scaled to one round);
 * - restore: the process stops (sessions closed, not unlinked); a new one on the same store connects
 *   every device (login from the stored auth state); the time until all are open.
 *
 * BENCH_LINKED_SNAPSHOT=<file> also writes a heap snapshot with every device linked; summarise it
 * with `node bench/heap-by-constructor.mjs <file>`.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { startWaPeer } from '../adapters/wa-peer/index.ts'
import { root } from './lib/process.ts'
import { note, report } from './lib/report.ts'
import { tempDir } from './lib/temp.ts'

const DEVICES = Number(process.env.BENCH_LINKED_DEVICES ?? 100)
// Links under way at once: 25 or 50 made the transport process run out of heap near 200 devices (bench/README.md).
const BATCH = Number(process.env.BENCH_LINKED_BATCH ?? 10)
// BENCH_LINKED_SNAPSHOT_AT=<n>: a heap snapshot 3 s (BENCH_LINKED_SNAPSHOT_DELAY ms) into linking the batch that starts after n devices.
const SNAPSHOT_AT = process.env.BENCH_LINKED_SNAPSHOT_AT ? Number(process.env.BENCH_LINKED_SNAPSHOT_AT) : undefined
const SNAPSHOT_AT_FILE = process.env.BENCH_LINKED_SNAPSHOT_AT_FILE ?? '/tmp/baileys-linked-linking.heapsnapshot'
// BENCH_LINKED_LINK_BUDGET_S: stop linking new batches after this many seconds and measure what is linked.
const BUDGET_MS = Number(process.env.BENCH_LINKED_LINK_BUDGET_S ?? Infinity) * 1000
// BENCH_LINKED_CHECKPOINTS=100,300: memory at rest also after these many devices (per device, as below).
const CHECKPOINTS = (process.env.BENCH_LINKED_CHECKPOINTS ?? '').split(',').filter(Boolean).map(Number)
const FRIEND = '5511988880000'
const KB = 1024
const MB = 2 ** 20

// The store in memory (tmpfs) when there is one: each of the 812 pre-keys a device writes at its first
// login is a commit of its own, and with SQLite's synchronous=FULL on disk the links wait on fsyncs.
const dir = await tempDir('linked', process.env.BENCH_LINKED_STORE_DIR ?? (existsSync('/dev/shm') ? '/dev/shm' : undefined))
const peer = await startWaPeer({ recordLimit: 0 })
const env = {
  ...process.env,
  BENCH_WA_URL: peer.url,
  BENCH_WA_ROOT: peer.rootPublicKey.toString('base64'),
  BENCH_STORE: `sqlite://${dir.file('store.sqlite')}`,
}
const friend = peer.phone(FRIEND)
const shopOf = (i: number) => `55119${String(i).padStart(8, '0')}`
const ids = Array.from({ length: DEVICES }, (_, i) => `device-${i}`)
try {
  let child = await startChild()
  const startedLinking = performance.now()
  await command(child, 'link', { ids: ['warm-up'] })
  note(`warm-up device linked in ${((performance.now() - startedLinking) / 1000).toFixed(1)} s`)
  const before = (await command(child, 'memory')).usage
  const linked: string[] = []
  const perDeviceAt = (usage: NodeJS.MemoryUsage, count: number) =>
    `${((usage.heapUsed - before.heapUsed) / count / KB).toFixed(0)} KB heap, ${((usage.rss - before.rss) / count / MB).toFixed(2)} MB RSS per device`
  for (let batch = 0; batch < DEVICES; batch += BATCH) {
    if (performance.now() - startedLinking > BUDGET_MS) {
      note(`the link budget (BENCH_LINKED_LINK_BUDGET_S) is spent: ${linked.length} of ${DEVICES} devices linked, measured as they are`)
      break
    }
    const t = performance.now()
    const linking = command(child, 'link', { ids: ids.slice(batch, batch + BATCH) })
    if (SNAPSHOT_AT !== undefined && batch === SNAPSHOT_AT) {
      await new Promise(resolve => setTimeout(resolve, Number(process.env.BENCH_LINKED_SNAPSHOT_DELAY ?? 3_000)))
      note(`heap snapshot while linking ${batch + 1} to ${batch + BATCH}: ${(await command(child, 'snapshot', { file: SNAPSHOT_AT_FILE })).file}`)
    }
    const { opened } = await linking
    linked.push(...opened)
    if (opened.length < Math.min(BATCH, DEVICES - batch))
      note(`${Math.min(BATCH, DEVICES - batch) - opened.length} devices of batch ${batch} did not open; left out`)
    if (process.env.BENCH_VERBOSE)
      note(
        `linked ${linked.length} (${((performance.now() - t) / 1000).toFixed(1)} s; the peer's heap ${(process.memoryUsage().heapUsed / MB).toFixed(0)} MB; ${JSON.stringify(peer.stats)})`,
      )
    if (CHECKPOINTS.includes(batch + BATCH)) {
      const usage = (await command(child, 'memory')).usage
      note(
        `checkpoint at rest, ${linked.length} linked: heap ${(usage.heapUsed / MB).toFixed(0)} MB, RSS ${(usage.rss / MB).toFixed(0)} MB: ${perDeviceAt(usage, linked.length)}`,
      )
    }
  }
  const N = linked.length
  note(
    `${N + 1} devices linked by QR in ${((performance.now() - startedLinking) / 1000).toFixed(1)} s (${peer.stats.pairings} pairings, ${peer.stats.logins} logins)`,
  )
  const after = (await command(child, 'memory')).usage
  note(
    `at rest: heap ${(before.heapUsed / MB).toFixed(1)} -> ${(after.heapUsed / MB).toFixed(1)} MB, RSS ${(before.rss / MB).toFixed(1)} -> ${(after.rss / MB).toFixed(1)} MB, external ${(before.external / MB).toFixed(1)} -> ${(after.external / MB).toFixed(1)} MB`,
  )
  const perDevice = (field: 'heapUsed' | 'rss') => (after[field] - before[field]) / N
  report({
    name: `baileys-linked-heap-per-device-${N}`,
    value: perDevice('heapUsed') / KB,
    unit: 'KB',
    baseline: before.heapUsed / MB,
    baselineUnit: 'MB (heap with one device)',
  })
  report({
    name: `baileys-linked-rss-per-device-${N}`,
    value: perDevice('rss') / MB,
    unit: 'MB',
    baseline: before.rss / MB,
    baselineUnit: 'MB (RSS with one device)',
    target: { of: 'value', op: '<=', limit: 3 },
  })

  // One round: every device sends a text to the friend and gets one from it.
  const round = command(child, 'round', { ids: linked, to: FRIEND, expect: N })
  await new Promise<void>(resolve => child.once('message', () => resolve())) // {sent}
  for (const id of linked) friend.sendText(shopOf(Number(id.slice('device-'.length))), `pong ${id}`)
  const { cpuMs, wallMs } = await round
  const decrypted = friend.inbox.filter(
    m => m.message.conversation?.startsWith('ping from') || m.message.extendedTextMessage?.text?.startsWith('ping from'),
  ).length
  note(
    `round: ${N} sent (${decrypted} decrypted by the phone) and ${N} received in ${(wallMs / 1000).toFixed(1)} s, ${cpuMs.toFixed(0)} ms CPU in the gateway process`,
  )
  report({
    name: `baileys-linked-cpu-per-message-${N}`,
    value: cpuMs / (2 * N),
    unit: 'ms',
    baseline: wallMs / (2 * N),
    baselineUnit: 'ms (wall time per message)',
  })

  // Memory again after the round: every device now has a session with the friend (a message a minute each).
  const active = (await command(child, 'memory')).usage
  note(`at rest after the round: heap ${(active.heapUsed / MB).toFixed(1)} MB, RSS ${(active.rss / MB).toFixed(1)} MB: ${perDeviceAt(active, N)}`)
  report({
    name: `baileys-linked-rss-per-device-messaging-${N}`,
    value: (active.rss - before.rss) / N / MB,
    unit: 'MB',
    baseline: (active.heapUsed - before.heapUsed) / N / KB,
    baselineUnit: 'KB heap per device',
    target: { of: 'value', op: '<=', limit: 3 },
  })

  // Writing a snapshot stops the process for seconds (long enough for keep-alives to fail): after the measures.
  if (process.env.BENCH_LINKED_SNAPSHOT) note(`heap snapshot: ${(await command(child, 'snapshot', { file: process.env.BENCH_LINKED_SNAPSHOT })).file}`)

  // Restart: a new process on the same store logs every device in again.
  await command(child, 'stop')
  await new Promise(resolve => child.once('exit', resolve))
  const loginsBefore = peer.stats.logins
  const spawned = performance.now()
  child = await startChild()
  const restored = await command(child, 'restore', { ids: linked })
  const total = performance.now() - spawned
  note(
    `restore: ${restored.open} of ${N} open, ${peer.stats.logins - loginsBefore} logins, ${peer.stats.pairings} pairings in all; ${(restored.ms / 1000).toFixed(1)} s from the first connect, ${(total / 1000).toFixed(1)} s from the process spawn`,
  )
  report({
    name: `baileys-linked-restore-${N}`,
    value: restored.ms / 1000,
    unit: 's',
    baseline: total / 1000,
    baselineUnit: 's (from the process spawn)',
  })
  const restoredUsage = (await command(child, 'memory')).usage
  note(`at rest after the restore: heap ${(restoredUsage.heapUsed / MB).toFixed(1)} MB, RSS ${(restoredUsage.rss / MB).toFixed(1)} MB`)
  report({
    name: `baileys-linked-rss-per-device-restored-${N}`,
    value: (restoredUsage.rss - before.rss) / N / MB,
    unit: 'MB',
    baseline: before.rss / MB,
    baselineUnit: 'MB (RSS with one device, first process)',
  })
  if (peer.records.problems.length) note(`peer problems: ${peer.records.problems.slice(0, 5).join('; ')}`)
  await command(child, 'stop')
} finally {
  await peer.close()
  await dir.remove()
}

// --- Internal helpers ---

async function startChild(): Promise<ChildProcess> {
  const child = fork(join(root, 'bench/servers/baileys-linked.mjs'), [], {
    cwd: root,
    env,
    // BENCH_LINKED_NODE_ARGS: more Node flags for the gateway process (e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`).
    execArgv: ['--expose-gc', ...(process.env.BENCH_LINKED_NODE_ARGS?.split(' ').filter(Boolean) ?? [])],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  // The phones scan each QR the devices show (one scan per device, the first QR it shows).
  const scanned = new Set<string>()
  child.on('message', (message: { qr?: string; id?: string }) => {
    if (!message.qr || !message.id || scanned.has(message.id)) return
    scanned.add(message.id)
    const index = message.id === 'warm-up' ? DEVICES : Number(message.id.slice('device-'.length))
    peer
      .phone(shopOf(index))
      .scan(message.qr)
      .catch(err => note(`scan of ${message.id} failed: ${err.message}`))
  })
  await new Promise<void>((resolve, reject) => {
    child.once('exit', code => reject(new Error(`baileys-linked.mjs exited with ${code}`)))
    child.on('message', (message: { ready?: boolean }) => message.ready && resolve())
  })
  return child
}

/** Send a command to the child and wait for its answer. */
function command(child: ChildProcess, cmd: string, args: Record<string, unknown> = {}): Promise<any> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: { done?: string; error?: string }) => {
      if (message.done !== cmd) return
      child.off('message', onMessage)
      if (message.error) reject(new Error(message.error))
      else resolve(message)
    }
    child.on('message', onMessage)
    child.send({ cmd, ...args })
  })
}
