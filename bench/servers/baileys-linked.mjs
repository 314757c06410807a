/**
 * The Baileys transport alone with linked devices, for bench/baileys-linked.bench.ts: the real
 * Baileys stack (default socket factory) against the driver's local WhatsApp peer at BENCH_WA_URL,
 * whose certificate root BENCH_WA_ROOT (base64) it trusts, on the SQLite store BENCH_STORE. Driven
 * over IPC by the driver, one command at a time, each answered `{done: <command>, ...}`:
 *
 *   {cmd: 'link', ids}        link these devices (QRs go to the driver as {qr, id}); answers those open once
 *                             all are, or after BENCH_LINKED_OPEN_TIMEOUT_S
 *   {cmd: 'memory'}           process.memoryUsage() at rest (full GCs)
 *   {cmd: 'round', to, text}  every open device sends `text` to `to`, then waits for `expect` incoming
 *                             messages; answers the process CPU time the round took (user + system)
 *   {cmd: 'restore', ids}     connect these stored devices; answers the ms until all are open
 *   {cmd: 'snapshot', file}   v8.writeHeapSnapshot(file)
 *   {cmd: 'stop'}             transport.stop(), then exit
 *
 * Plain JavaScript on the compiled package (`dist/`), like the other bench servers.
 */
import { writeHeapSnapshot } from 'node:v8'
import { WA_CERT_DETAILS } from '@whiskeysockets/baileys'
import { baileysTransport } from 'zapgate/adapters/transport-baileys'
import { storageFromUrl } from 'zapgate/adapters/storage-keyv'

WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(process.env.BENCH_WA_ROOT, 'base64')
const quiet = () => undefined
const logger = { debug: quiet, info: quiet, warn: quiet, error: quiet }
const storage = await storageFromUrl(process.env.BENCH_STORE)
const transport = baileysTransport({
  resolveVersion: async () => [2, 3000, 1],
  // Keep-alive every 120 s (BENCH_LINKED_KEEPALIVE_MS; Baileys: 30 s): Baileys ends a connection with 408 when
  // no frame came for the interval + 5 s, and its timer runs before the socket reads that waited through an
  // event-loop stall, so on a machine shared by other jobs (load 20 on 2 cores) one stall of the linking
  // work dropped every device in turn, and each reconnect made more of that work.
  socketConfig: {
    waWebSocketUrl: process.env.BENCH_WA_URL,
    qrTimeout: 600_000,
    keepAliveIntervalMs: Number(process.env.BENCH_LINKED_KEEPALIVE_MS ?? 120_000),
    // The same for the handshake and login (20 s) and iq answers (60 s): under that load every link
    // and reconnect timed out in turn, redid its work, and none completed.
    connectTimeoutMs: Number(process.env.BENCH_LINKED_TIMEOUT_MS ?? 300_000),
    defaultQueryTimeoutMs: Number(process.env.BENCH_LINKED_TIMEOUT_MS ?? 300_000),
  },
  linkTimeoutMs: 600_000,
  openTimeoutMs: Number(process.env.BENCH_LINKED_TIMEOUT_MS ?? 300_000),
  sendTimeoutMs: Number(process.env.BENCH_LINKED_TIMEOUT_MS ?? 300_000),
  baileysLogLevel: 'silent',
})

// BENCH_LINKED_TRACE=<seconds>: the process's memory (no GC forced) on stderr at that period.
if (process.env.BENCH_LINKED_TRACE) {
  const MB = 2 ** 20
  setInterval(
    () => {
      const m = process.memoryUsage()
      console.error(
        `trace: ${open.size} open, heap ${(m.heapUsed / MB).toFixed(0)} / ${(m.heapTotal / MB).toFixed(0)} MB, RSS ${(m.rss / MB).toFixed(0)} MB, external ${(m.external / MB).toFixed(0)} MB, arrayBuffers ${(m.arrayBuffers / MB).toFixed(0)} MB; closed: ${JSON.stringify(Object.fromEntries(closes))}`,
      )
    },
    Number(process.env.BENCH_LINKED_TRACE) * 1000,
  ).unref()
}

const open = new Set()
/** Why open devices stopped being open (state and reason), counted: BENCH_LINKED_TRACE prints them. */
const closes = new Map()
const waiters = new Set()
let received = 0
await transport.start({
  storage,
  logger,
  emit: async event => {
    if (event.type === 'qr') process.send({ qr: event.qr, id: event.deviceId })
    else if (event.type === 'status' && event.status.state === 'open') open.add(event.deviceId)
    else if (event.type === 'status') {
      if (open.delete(event.deviceId)) {
        const why = `${event.status.state}: ${event.status.reason ?? ''}`
        closes.set(why, (closes.get(why) ?? 0) + 1)
      }
    } else if (event.type === 'message' && !event.message.fromMe) received++
    for (const waiter of waiters) waiter()
  },
})

/** Resolve once `check()` holds (re-checked on every transport event and every 200 ms). */
function until(check) {
  return new Promise(resolve => {
    const waiter = () => {
      if (!check()) return
      waiters.delete(waiter)
      clearInterval(timer)
      resolve()
    }
    const timer = setInterval(waiter, 200)
    waiters.add(waiter)
    waiter()
  })
}

async function settled() {
  const deadline = Date.now() + 15_000
  for (;;) {
    globalThis.gc()
    await new Promise(resolve => setTimeout(resolve, 300))
    globalThis.gc()
    const usage = process.memoryUsage()
    if (usage.heapTotal - usage.heapUsed <= 4 * 2 ** 20 || Date.now() > deadline) return usage
  }
}

const commands = {
  async link({ ids }) {
    await Promise.all(
      ids.map(async id => {
        const challenge = await transport.link(id, {})
        process.send({ qr: challenge.qr, id })
      }),
    )
    // A device that has not opened within BENCH_LINKED_OPEN_TIMEOUT_S (default 600) is left out.
    const timeout = new Promise(resolve => setTimeout(resolve, Number(process.env.BENCH_LINKED_OPEN_TIMEOUT_S ?? 600) * 1000).unref())
    await Promise.race([until(() => ids.every(id => open.has(id))), timeout])
    return { opened: ids.filter(id => open.has(id)) }
  },
  memory: async () => ({ usage: await settled() }),
  async round({ ids, to, expect }) {
    const cpu = process.cpuUsage()
    const started = performance.now()
    const target = received + expect
    await Promise.all(ids.map(id => transport.send(id, to, { kind: 'text', text: `ping from ${id}` })))
    process.send({ sent: ids.length })
    await until(() => received >= target)
    const used = process.cpuUsage(cpu)
    return { cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - started }
  },
  async restore({ ids }) {
    const started = performance.now()
    await Promise.all(ids.map(id => transport.connect(id)))
    const timeout = new Promise(resolve => setTimeout(resolve, Number(process.env.BENCH_LINKED_OPEN_TIMEOUT_S ?? 600) * 1000).unref())
    await Promise.race([until(() => ids.every(id => open.has(id))), timeout])
    return { ms: performance.now() - started, open: ids.filter(id => open.has(id)).length }
  },
  async snapshot({ file }) {
    globalThis.gc()
    return { file: writeHeapSnapshot(file) }
  },
  async stop() {
    await transport.stop()
    setImmediate(() => process.exit(0))
    return {}
  },
}

process.on('message', async message => {
  try {
    process.send({ done: message.cmd, ...(await commands[message.cmd](message)) })
  } catch (err) {
    process.send({ done: message.cmd, error: String(err?.stack ?? err) })
  }
})
process.send({ ready: true })
