import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { NODE_TS } from './node-ts.ts'

/** A helper script run as a separate `node` process (TypeScript through the tests' loader), whose output lines a test waits for. */
export interface LineProcess {
  process: ChildProcess
  /** Its output lines so far. */
  lines: string[]
  /** The first line of its output (so far or to come) that `matches`; rejects when it exits first or none comes within `timeoutMs`. */
  line(matches: (line: string) => boolean, timeoutMs?: number): Promise<string>
}

/** Start `script` (a path from the repo root) with `env` added; `name` says which process in an error. */
export function startLineProcess(script: string, env: Record<string, string>, name: string): LineProcess {
  const child = spawn(process.execPath, [...NODE_TS, script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr!.on('data', chunk => (stderr += chunk))
  const lines: string[] = []
  const waiters: (() => void)[] = []
  createInterface({ input: child.stdout! }).on('line', line => (lines.push(line), waiters.splice(0).forEach(wake => wake())))
  const exited = new Promise<never>((_, reject) => child.on('exit', code => reject(new Error(`${name} exited (${code}): ${stderr.trim() || 'no output'}`))))
  exited.catch(() => {})
  const line = async (matches: (line: string) => boolean, timeoutMs = 30_000): Promise<string> => {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const found = lines.find(matches)
      if (found !== undefined) return found
      if (Date.now() > deadline) throw new Error(`no such line within ${timeoutMs} ms; output: ${lines.join(' | ')}; stderr: ${stderr.trim()}`)
      await Promise.race([new Promise<void>(wake => (waiters.push(wake), setTimeout(wake, 500))), exited])
    }
  }
  return { process: child, lines, line }
}

/** The processes of one test, each `script` run with `base` and its own env added; killAll ends those still running (a test's `finally`). */
export function processGroup(script: string, base: Record<string, string>, name: string) {
  const started: LineProcess[] = []
  return {
    started,
    start(env: Record<string, string> = {}): LineProcess {
      const child = startLineProcess(script, { ...base, ...env }, name)
      started.push(child)
      return child
    },
    killAll(): void {
      for (const child of started) if (child.process.exitCode === null) child.process.kill('SIGKILL')
    },
  }
}

/** The instance id a helper process prints once registered (`instance <id>`). */
export async function instanceIdOf(child: LineProcess): Promise<string> {
  return (await child.line(line => line.startsWith('instance '))).slice('instance '.length)
}

/** Run `meanwhile` with `child` stopped (SIGSTOP: a long GC, a frozen VM), then let it go on (SIGCONT), also when `meanwhile` throws. */
export async function whilePaused<T>(child: LineProcess, meanwhile: () => Promise<T>): Promise<T> {
  child.process.kill('SIGSTOP')
  try {
    return await meanwhile()
  } finally {
    child.process.kill('SIGCONT')
  }
}
