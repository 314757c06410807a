import { spawn } from 'node:child_process'
import { freePort, root } from './process.ts'

/** The standalone server (memory transport and store, limits off) in a child process, reporting its memory every `sampleMs` (bench/memory-probe.mjs). */
export async function startSoakServer(settings: {
  sampleMs: number
  simLogLimit: number
}): Promise<{ url: string; pid: number; onMemory(listener: (memory: NodeJS.MemoryUsage) => void): void; stop(): Promise<void> }> {
  const port = await freePort()
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', './bench/memory-probe.mjs', '--conditions=source', '--import', 'tsx', 'examples/standalone.ts'],
    {
      cwd: root,
      env: {
        ...process.env,
        PORT: String(port),
        GATEWAY_TRANSPORT: 'memory',
        GATEWAY_STORE: 'memory://',
        GATEWAY_RATE_LIMIT: 'off',
        GATEWAY_ALLOW_PRIVATE_URLS: '1',
        LOG_LEVEL: 'warn',
        LOAD_SAMPLE_MS: String(settings.sampleMs),
        GATEWAY_SIM_LOG_LIMIT: String(settings.simLogLimit),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  let listener: (memory: NodeJS.MemoryUsage) => void = () => {}
  let buffered = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk
    const lines = buffered.split('\n')
    buffered = lines.pop()!
    for (const line of lines) if (line.startsWith('MEMORY ')) listener(JSON.parse(line.slice('MEMORY '.length)))
  })
  const exited = new Promise(resolve => child.once('exit', resolve))
  const url = `http://127.0.0.1:${port}`
  for (const deadline = Date.now() + 30_000; ;) {
    if (child.exitCode !== null) throw new Error('the standalone server exited at start')
    const up = await fetch(`${url}/api/auth`, { method: 'POST' }).catch(() => undefined)
    if (up) break
    if (Date.now() > deadline) throw new Error('the standalone server did not start')
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  return {
    url,
    pid: child.pid!,
    onMemory: next => void (listener = next),
    async stop() {
      child.kill('SIGTERM')
      await exited
    },
  }
}
