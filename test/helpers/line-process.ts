import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'

/** A helper script run as a separate `node` process (TypeScript through tsx), whose output lines a test waits for. */
export interface LineProcess {
  process: ChildProcess
  /** Its output lines so far. */
  lines: string[]
  /** The first line of its output (so far or to come) that `matches`; rejects when it exits first or none comes within `timeoutMs`. */
  line(matches: (line: string) => boolean, timeoutMs?: number): Promise<string>
}

/** Start `script` (a path from the repo root) with `env` added; `name` says which process in an error. */
export function startLineProcess(script: string, env: Record<string, string>, name: string): LineProcess {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', script], {
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
