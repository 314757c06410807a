import { spawn, type ChildProcess } from 'node:child_process'
import { freePort } from './standalone.ts'
import { NODE_TS } from './node-ts.ts'

const root = new URL('../..', import.meta.url).pathname

/** The simulator server (examples/simulator.ts, what `npm run sim` runs) as a child process. */
export interface SimulatorProcess {
  url: string
  port: number
  child: ChildProcess
  /** Everything the child printed so far (pino JSON lines). */
  output(): string
  /** `GET /_sim/stats`. */
  stats(): Promise<{ connections: number; replaced: number; sent: number; received: number }>
  /** Send a signal and wait for the process to exit; resolves with its exit code (null when killed). */
  kill(signal?: NodeJS.Signals): Promise<number | null>
}

/** Start the simulator server with `env` on a free port and wait until it listens. */
export async function startSimulator(env: Record<string, string> = {}): Promise<SimulatorProcess> {
  const port = await freePort()
  const child = spawn(process.execPath, [...NODE_TS, `${root}examples/simulator.ts`], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'info', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', d => (output += d))
  child.stderr!.on('data', d => (output += d))
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  const deadline = Date.now() + 60_000 // node and the TypeScript loader start slowly on a loaded machine
  while (!output.includes('simulator listening')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`simulator did not start:\n${output}`)
    }
    await new Promise(resolve => setTimeout(resolve, 25))
  }
  const url = `http://127.0.0.1:${port}`
  return {
    url,
    port,
    child,
    output: () => output,
    stats: async () => (await fetch(`${url}/_sim/stats`)).json() as Promise<Awaited<ReturnType<SimulatorProcess['stats']>>>,
    async kill(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    },
  }
}
