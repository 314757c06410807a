import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { NODE_TS } from './node-ts.ts'

const root = new URL('../..', import.meta.url).pathname

/** A standalone server (examples/standalone.ts) running as a child process. */
export interface StandaloneServer {
  url: string
  port: number
  child: ChildProcess
  /** Everything the child printed so far (pino JSON lines). */
  output(): string
  /** Send a signal and wait for the process to exit; resolves with its exit code (null when killed). */
  kill(signal?: NodeJS.Signals): Promise<number | null>
}

/** What a child process printed so far (stdout and stderr) and whether it has exited. */
export function watch(child: ChildProcess): { output(): string; exited(): boolean } {
  let output = ''
  let exited = false
  child.stdout?.on('data', d => (output += d))
  child.stderr?.on('data', d => (output += d))
  child.once('exit', () => (exited = true))
  return { output: () => output, exited: () => exited }
}

/**
 * A free TCP port on 127.0.0.1 for a child process to bind a moment later. Drawn at random below the
 * kernel's ephemeral range (32768 and up on Linux), not by `listen(0)`: a port from `listen(0)` is in
 * that range, where, in the second a child takes to start, another test file's `listen(0)` or any
 * outgoing connection (a store client's) could be handed it, and the child's bind failed with
 * EADDRINUSE. Here only another pick of the same random port in that second could take it, and this
 * process never hands out one port twice.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = PORTS_FROM + Math.floor(Math.random() * PORTS_SPAN)
    if (handedOut.has(port)) continue
    const server = createServer()
    const bound = await new Promise<boolean>(resolve => {
      server.once('error', () => resolve(false))
      server.listen(port, '127.0.0.1', () => resolve(true))
    })
    if (!bound) continue
    await new Promise(resolve => server.close(resolve))
    handedOut.add(port)
    return port
  }
}

/** Where `freePort` draws from: 10000 to 31999, under the ephemeral range and above the services' ports (RabbitMQ's 25672 fails its check). */
const PORTS_FROM = 10_000
const PORTS_SPAN = 22_000
/** The ports `freePort` returned in this process. */
const handedOut = new Set<number>()

/** A fresh temporary directory for a test's SQLite file. */
export function tempDir(prefix = 'zapgate-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/** Run `npm start`'s program in `cwd` with `env` (GATEWAY_TRANSPORT=memory unless given; PORT as given, even empty) until it exits: its exit code and output. */
export async function runStandaloneToExit(env: Record<string, string>, cwd = root): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [...NODE_TS, `${root}examples/standalone.ts`], {
    cwd,
    env: { ...process.env, GATEWAY_TRANSPORT: 'memory', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const { output } = watch(child)
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
  const code = await new Promise<number | null>(resolve => child.once('exit', resolve))
  clearTimeout(timer)
  return { code, output: output() }
}

/**
 * Start `npm start`'s program with `env` (GATEWAY_TRANSPORT=memory unless given) and wait until it
 * listens. Pass the same GATEWAY_STORE to a second start to test a restart; `cwd` to run it elsewhere
 * (where its default store files go).
 */
export async function startStandalone(env: Record<string, string> = {}, port?: number, cwd = root): Promise<StandaloneServer> {
  const chosenPort = port ?? (await freePort())
  const child = spawn(process.execPath, [...NODE_TS, `${root}examples/standalone.ts`], {
    cwd,
    env: { ...process.env, GATEWAY_TRANSPORT: 'memory', LOG_LEVEL: 'info', ...env, PORT: String(chosenPort) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const { output } = watch(child)
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  const deadline = Date.now() + 60_000 // node and the TypeScript loader start slowly on a loaded machine
  while (!output().includes('gateway listening')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`standalone server did not start:\n${output()}`)
    }
    await new Promise(resolve => setTimeout(resolve, 25))
  }
  return {
    url: `http://127.0.0.1:${chosenPort}`,
    port: chosenPort,
    child,
    output,
    async kill(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    },
  }
}
