import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'

/** The repository root (benchmarks run from anywhere). */
export const root = new URL('../..', import.meta.url).pathname

/** A server started in its own process. */
export interface ServerProcess {
  url: string
  /** performance.now() of the driver when the process was spawned. */
  spawnedAt: number
  child: ChildProcess
  /** Ask it for a JSON document (GET). */
  get(path: string): Promise<any>
  /** POST JSON; throws unless the answer is 2xx. */
  post(path: string, body: unknown): Promise<any>
  stop(): Promise<void>
  /** `kill -9`: the process dies without a word to anyone; resolves once it has exited. */
  kill(): Promise<void>
}

/**
 * Start `bench/servers/<script>` (plain JavaScript) in a child process of `node` alone and wait for
 * its `READY <port>` line. The servers import the gateway as an app using the library does: the
 * compiled package (`dist/`, built by `bench/run.mjs` first), without a TypeScript loader. With BENCH_PROFILE=<dir> in the
 * environment the servers run under `node --cpu-prof` and leave their profiles there (read them with
 * `node bench/profile-top.mjs <file>`); BENCH_NODE_ARGS adds other Node flags (e.g. `--heap-prof`).
 * `options.root` runs the server of another copy of the package (its own `dist/` and `bench/servers/`:
 * see bench/compare-builds.ts).
 */
export async function startServer(
  script: string,
  env: Record<string, string> = {},
  options: { hostname?: string; root?: string } = {},
): Promise<ServerProcess> {
  const spawnedAt = performance.now()
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : []
  profile.push(...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []))
  const args = [...profile, '--expose-gc', `bench/servers/${script}`]
  // A host name of its own (a UTS namespace; same pid, the shell execs node): the process looks like one on another machine.
  const [command, commandArgs] = options.hostname
    ? ['unshare', ['--uts', 'sh', '-c', `hostname ${options.hostname} && exec "$0" "$@"`, process.execPath, ...args]]
    : [process.execPath, args]
  const child = spawn(command, commandArgs, {
    cwd: options.root ?? root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
  const port = await new Promise<number>((resolve, reject) => {
    let buffered = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk
      const match = /READY (\d+)/.exec(buffered)
      if (match) resolve(Number(match[1]))
    })
    child.once('exit', code => reject(new Error(`${script} exited (${code}) before it was ready`)))
  })
  const url = `http://127.0.0.1:${port}`
  return {
    url,
    spawnedAt,
    child,
    get: path => request(`${url}${path}`),
    post: (path, body) => request(`${url}${path}`, body),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    },
  }
}

/** Run a script under bench/servers to completion; resolves with its stdout. */
export async function runScript(script: string, env: Record<string, string> = {}): Promise<string> {
  const child = spawn(process.execPath, [`bench/servers/${script}`], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  child.stdout!.on('data', chunk => (out += chunk))
  const code = await new Promise<number | null>(resolve => child.once('exit', resolve))
  if (code !== 0) throw new Error(`${script} exited with ${code}`)
  return out
}

/** POST (with a body) or GET a JSON document; throws unless the answer is 2xx. */
export async function request(url: string, body?: unknown): Promise<any> {
  const response = await fetch(url, body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const text = await response.text()
  if (!response.ok) throw new Error(`${url}: ${response.status} ${text}`)
  return text ? JSON.parse(text) : undefined
}

/** Whether startServer can give a process a host name of its own (`unshare --uts`: root on Linux). */
export function canSetHostname(): boolean {
  return spawnSync('unshare', ['--uts', 'true']).status === 0
}

/** A free TCP port on 127.0.0.1 (for a server that must know its own address before it listens). */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  await new Promise(resolve => server.close(resolve))
  return port
}

/** How many times the process's main thread (its event loop) went to sleep so far (`voluntary_ctxt_switches`, /proc; 0 where unreadable): each one is a wake-up paid later. */
export function eventLoopSleeps(pid: number | undefined): number {
  try {
    return Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0)
  } catch {
    return 0
  }
}

/** CPU time (user + system) a process has used so far, in µs, from /proc (Linux; 0 elsewhere or once it is gone). */
export function cpuMicros(pid: number | undefined): number {
  try {
    // Fields after the command name (which may hold spaces): state is the 3rd field, utime the 14th, stime the 15th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS) * 1e6
  } catch {
    return 0
  }
}

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const CLOCK_TICKS = 100
