/**
 * The Baileys transport alone, for the per-device memory figure (bench/baileys-qr-memory.bench.ts):
 * the real Baileys stack (default socket factory) against the driver's local Noise peer at
 * BENCH_WA_URL, whose certificate root BENCH_WA_ROOT (base64) it trusts. It links one device (Baileys
 * and every code path loaded), reads its memory at rest, links BENCH_DEVICES more devices (each waits
 * at the QR stage: handshake done, `pair-device` answered, QR shown), reads again, and prints one line
 * `RESULT <json>`. Plain JavaScript on the compiled package (`dist/`), like the other bench servers.
 */
import { WA_CERT_DETAILS } from '@whiskeysockets/baileys'
import { baileysTransport } from 'zapgate/adapters/transport-baileys'
import { storageFromUrl } from 'zapgate/adapters/storage-keyv'

WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(process.env.BENCH_WA_ROOT, 'base64')
const devices = Number(process.env.BENCH_DEVICES ?? 200)
const quiet = () => undefined
const logger = { debug: quiet, info: quiet, warn: quiet, error: quiet }
const storage = await storageFromUrl('memory://')
const transport = baileysTransport({
  resolveVersion: async () => [2, 3000, 1],
  // The QR stays valid for the whole run (the first QR lives qrTimeout; no rotation, no expiry).
  socketConfig: { waWebSocketUrl: process.env.BENCH_WA_URL, qrTimeout: 600_000, connectTimeoutMs: 20_000 },
  linkTimeoutMs: 60_000,
  baileysLogLevel: 'silent',
})
let qrs = 0
await transport.start({ storage, logger, emit: async event => void (event.type === 'qr' && qrs++) })

await transport.link('warm-up', {})
const before = await settled()
const started = performance.now()
for (let batch = 0; batch < devices; batch += 20) {
  const ids = Array.from({ length: Math.min(20, devices - batch) }, (_, i) => `device-${batch + i}`)
  const challenges = await Promise.all(ids.map(id => transport.link(id, {})))
  if (challenges.some(challenge => challenge.kind !== 'qr')) throw new Error('a device did not reach the QR')
}
const linkSeconds = (performance.now() - started) / 1000
const after = await settled()
const statuses = await Promise.all(Array.from({ length: devices }, (_, i) => transport.status(`device-${i}`)))
const linking = statuses.filter(status => status.state === 'linking').length
process.stdout.write(`RESULT ${JSON.stringify({ devices, linking, linkSeconds, before, after })}\n`)
await transport.stop()
process.exit(0)

/** process.memoryUsage() at rest: full GCs until the heap holds no more than 4 MB beyond its live objects (at most 15 s). */
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
