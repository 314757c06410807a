import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { npmEnv } from './npm-env.ts'
import { freePort, watch } from './standalone.ts'

const root = new URL('../..', import.meta.url).pathname

/** `npm start` (or `npm run <script>`) running in a process group of its own, as a supervisor runs it. */
export interface NpmGroup {
  url: string
  port: number
  /** npm's pid, which is also the group's id. */
  pgid: number
  npm: ChildProcess
  /** The pid the server logged. */
  serverPid: number
  /** Everything the group printed so far (npm's lines and the server's pino JSON lines). */
  output(): string
  /** Signal the whole group, as systemd's control-group stop or `kill -- -PGID` does. */
  signal(signal: NodeJS.Signals): void
  /** Resolves with npm's exit code (null when killed by a signal). */
  exited: Promise<number | null>
  /** Resolves once no process of the group is left (zombies included: Linux /proc; elsewhere, once npm exited). */
  gone(timeoutMs?: number): Promise<void>
  /** SIGKILL whatever is left of the group and wait until npm exited. */
  kill(): Promise<void>
}

/**
 * Start `npm start` (or `npm run <script>`) detached, so that it leads a process group of its own,
 * with `env` (PORT chosen here), and wait until it logs `ready`.
 */
export async function startNpmGroup(
  env: Record<string, string>,
  { script = 'start', ready = 'gateway listening', port }: { script?: string; ready?: string; port?: number } = {},
): Promise<NpmGroup> {
  const chosenPort = port ?? (await freePort())
  const npm = spawn('npm', script === 'start' ? ['start'] : ['run', script], {
    cwd: root,
    detached: true,
    env: npmEnv({ LOG_LEVEL: 'info', ...env, PORT: String(chosenPort) }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const pgid = npm.pid!
  const { output } = watch(npm)
  const exited = new Promise<number | null>(resolve => npm.once('exit', code => resolve(code)))
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-pgid, name)
    } catch {
      // the group is gone already
    }
  }
  const deadline = Date.now() + 60_000 // npm, node and tsx start slowly on a loaded machine
  while (!new RegExp(`"pid":\\d+.*${ready}`).test(output())) {
    if (npm.exitCode !== null || Date.now() > deadline) {
      signal('SIGKILL')
      throw new Error(`npm ${script} did not start:\n${output()}`)
    }
    await new Promise(resolve => setTimeout(resolve, 25))
  }
  const serverPid = Number(new RegExp(`"pid":(\\d+).*${ready}`).exec(output())![1])
  return {
    url: `http://127.0.0.1:${chosenPort}`,
    port: chosenPort,
    pgid,
    npm,
    serverPid,
    output,
    signal,
    exited,
    async gone(timeoutMs = 15_000) {
      await exited
      const until = Date.now() + timeoutMs
      while (groupMembers(pgid).length > 0) {
        if (Date.now() > until) throw new Error(`processes of group ${pgid} still there: ${groupMembers(pgid).join(', ')}`)
        await new Promise(resolve => setTimeout(resolve, 25))
      }
    },
    async kill() {
      signal('SIGKILL')
      await exited
      npm.stdout?.destroy()
      npm.stderr?.destroy()
    },
  }
}

/** The pids in process group `pgid` (zombies included). Linux /proc; elsewhere none are found. */
export function groupMembers(pgid: number): number[] {
  if (!existsSync('/proc/self/stat')) return []
  const found: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      // Fields after the command name: state, ppid, pgrp, ...
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[2]) === pgid) found.push(Number(name))
    } catch {
      // gone meanwhile
    }
  }
  return found
}
