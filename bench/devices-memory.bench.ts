/**
 * devices-memory: the resident set size of the gateway (memory transport, memory store) with 1,000
 * linked devices, at rest: read by the server itself after a full GC (`GET /_bench/memory`), once V8
 * has shrunk the young generation the linking burst grew (see settledMemory). Baseline: the same
 * process before the devices, idle with one account, read the same way. Target <= 150 MB. The
 * reading right after the burst is printed as a note.
 */
import { settledMemory } from './lib/memory.ts'
import { startServer } from './lib/process.ts'
import { note, report } from './lib/report.ts'
import { accountWithDevices } from './lib/setup.ts'

const DEVICES = 1_000
const MB = 2 ** 20
const mb = (bytes: number) => (bytes / MB).toFixed(1)

const gateway = await startServer('gateway.mjs')
try {
  // A throwaway account first, so the baseline has the registration paths loaded and one account stored.
  await accountWithDevices(gateway, 0)
  const idle = await settledMemory(gateway)
  const started = performance.now()
  await accountWithDevices(gateway, DEVICES, { by: 'code' })
  note(`linked ${DEVICES} devices through the API (op 3 with pairing codes) in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  const loaded = await settledMemory(gateway)
  for (const [label, reading] of [
    ['idle', idle],
    [`${DEVICES} devices`, loaded],
  ] as const) {
    const { usage, first } = reading
    note(
      `${label}: RSS ${mb(usage.rss)} MB at rest after ${(reading.waitedMs / 1000).toFixed(1)} s${reading.settled ? '' : ' (heap never shrank)'} ` +
        `(${mb(first.rss)} MB at once), heap ${mb(usage.heapUsed)} used of ${mb(usage.heapTotal)} MB (at once ${mb(first.heapTotal)} MB)`,
    )
  }
  report({ name: 'devices-memory', value: loaded.usage.rss / MB, unit: 'MB', baseline: idle.usage.rss / MB, target: { of: 'value', op: '<=', limit: 150 } })
} finally {
  await gateway.stop()
}
