// Preloaded into the load soak's server (node --expose-gc --import ./bench/memory-probe.mjs): every
// LOAD_SAMPLE_MS it runs a full garbage collection and prints one line `MEMORY <process.memoryUsage()>`
// so the soak measures what stays alive, not what the collector has not reclaimed yet.
const every = Number(process.env.LOAD_SAMPLE_MS ?? 5000)
const sample = () => {
  globalThis.gc?.()
  process.stdout.write(`MEMORY ${JSON.stringify(process.memoryUsage())}\n`)
}
setInterval(sample, every).unref()
sample()
