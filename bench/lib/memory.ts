import type { ServerProcess } from './process.ts'

/** process.memoryUsage() of a bench server, as `GET /_bench/memory` answers it (after a full GC). */
export interface MemoryUsage {
  rss: number
  heapTotal: number
  heapUsed: number
  external: number
  arrayBuffers: number
}

/** A settled reading, and how long it took to settle. */
export interface SettledMemory {
  usage: MemoryUsage
  /** The first reading, taken at once. */
  first: MemoryUsage
  waitedMs: number
  /** False when the heap was still oversized after `maxWaitMs` (then `usage` is the last reading). */
  settled: boolean
}

/**
 * The server's memory at rest. Right after a burst of work V8's young generation has grown to its
 * full size (2 x 16 MB semispaces) and stays so after a forced GC, until V8's memory reducer shrinks
 * it a few seconds into idleness; the pages a GC frees are also unmapped a moment later. So: read
 * `/_bench/memory` every `intervalMs` until the heap has no more than `slackBytes` beyond its live
 * objects (young generation shrunk), at most `maxWaitMs`.
 */
export async function settledMemory(
  server: ServerProcess,
  options: { maxWaitMs?: number; intervalMs?: number; slackBytes?: number } = {},
): Promise<SettledMemory> {
  const { maxWaitMs = 20_000, intervalMs = 500, slackBytes = 8 * 2 ** 20 } = options
  const started = performance.now()
  const first: MemoryUsage = await server.get('/_bench/memory')
  let usage = first
  for (;;) {
    const waitedMs = performance.now() - started
    if (usage.heapTotal - usage.heapUsed <= slackBytes) {
      // Once more after a pause: the pages this GC freed are unmapped in the background.
      await new Promise(resolve => setTimeout(resolve, intervalMs))
      return { usage: await server.get('/_bench/memory'), first, waitedMs: performance.now() - started, settled: true }
    }
    if (waitedMs >= maxWaitMs) return { usage, first, waitedMs, settled: false }
    await new Promise(resolve => setTimeout(resolve, intervalMs))
    usage = await server.get('/_bench/memory')
  }
}
