/**
 * A local cluster in one command (`npm run cluster`): the simulator server and three gateway
 * instances in cluster mode on one Redis or PostgreSQL store, each a process of its own, every one
 * answering any request. For trying scale-out on one machine; in production each instance is a
 * `npm start` of its own (the variables below, set by hand). Environment:
 *
 *   GATEWAY_STORE            the shared store (default redis://127.0.0.1:6379; postgres://... works too)
 *   PORT                     the first instance's port (default 3001; the others take the next ones)
 *   SIM_PORT                 the simulator's port (default 4000)
 *   INSTANCES                how many instances (default 3)
 *   GATEWAY_CLUSTER_SECRET   the secret the instances share (default: a random one for this run)
 *
 * Each instance gets GATEWAY_TRANSPORT=memory, GATEWAY_SIM_URL, GATEWAY_STORE,
 * GATEWAY_CLUSTER_SECRET and GATEWAY_ADVERTISE_URL; anything else in the environment (LOG_LEVEL,
 * GATEWAY_STORE_NAMESPACE, ...) passes through. Ctrl-C or SIGTERM stops them all (gracefully; later
 * signals are ignored, a second Ctrl-C ends them all at once): the instances first, then the simulator,
 * which runs in a process group of its own, so that a signal to the whole group (Ctrl-C in a terminal,
 * a supervisor's stop) does not stop it while the instances drain.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { handleShutdownSignals } from './shutdown-signals.ts'
import { parsePort } from './env-config.ts'

const env = process.env
const here = fileURLToPath(new URL('.', import.meta.url))
const store = env.GATEWAY_STORE || 'redis://127.0.0.1:6379'
const firstPort = parsePort(env.PORT, 3001)
const simPort = parsePort(env.SIM_PORT, 4000, 'SIM_PORT')
const count = Number(env.INSTANCES ?? 3)
const secret = env.GATEWAY_CLUSTER_SECRET ?? randomBytes(24).toString('base64url')
const children: ChildProcess[] = []

/**
 * Start `file` (an example) with `extra` in its environment; resolves once `ready` answers. `own`: in a process group of its own,
 * which a signal to this one's group (Ctrl-C, a group stop) does not reach; it stops when told, or when this process goes (its IPC channel ends).
 */
async function start(name: string, file: string, extra: Record<string, string>, ready: string, own = false): Promise<void> {
  const child = spawn(process.execPath, [...process.execArgv, `${here}${file}`], {
    env: { ...env, ...extra },
    stdio: ['ignore', 'pipe', 'inherit', ...(own ? ['ipc' as const] : [])],
    detached: own,
  })
  children.push(child)
  child.stdout!.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) if (line.trim()) process.stdout.write(`[${name}] ${line}\n`)
  })
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}) before it was ready`)
    if (
      await fetch(ready).then(
        answer => answer.ok,
        () => false,
      )
    )
      return
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

let stopping = false
async function stopAll(signal: NodeJS.Signals): Promise<void> {
  if (stopping) return
  stopping = true
  // Instances first (they hand their devices back), then the simulator.
  const exits = (list: ChildProcess[]) =>
    Promise.all(list.map(child => (child.exitCode !== null ? undefined : new Promise(resolve => (child.once('exit', resolve), child.kill(signal))))))
  await exits(children.slice(1))
  await exits(children.slice(0, 1))
  process.exit(0)
}
// Every SIGTERM/SIGINT of its life: the first stops the children gracefully (each ignores the same
// signal reaching it again from a group stop); a second Ctrl-C kills them and exits at once.
const say = (fields: object, message: string) => console.log(`${message} ${JSON.stringify(fields)}`)
handleShutdownSignals({ info: say, warn: say }, { beforeExit: () => children.forEach(child => child.kill('SIGKILL')) }).ready(async () => {
  console.log('stopping the cluster')
  await stopAll('SIGTERM')
})

try {
  // The network outlives the instances: a group stop reaches them, not it, and it is stopped once they have drained (their sends in flight go out).
  await start('sim', 'simulator.ts', { PORT: String(simPort) }, `http://127.0.0.1:${simPort}/_sim/stats`, true)
  const urls: string[] = []
  for (let i = 0; i < count; i++) {
    const port = firstPort + i
    const url = `http://127.0.0.1:${port}`
    await start(
      `gw${i + 1}`,
      'standalone.ts',
      {
        PORT: String(port),
        GATEWAY_TRANSPORT: 'memory',
        GATEWAY_SIM_URL: `http://127.0.0.1:${simPort}`,
        GATEWAY_STORE: store,
        GATEWAY_CLUSTER_SECRET: secret,
        GATEWAY_ADVERTISE_URL: url,
      },
      `${url}/health`,
    )
    urls.push(url)
  }
  console.log(`cluster ready: simulator http://127.0.0.1:${simPort}, instances ${urls.join(' ')} (store ${store.replace(/\/\/[^@/]*@/, '//***@')})`)
} catch (err) {
  console.error(String(err))
  await stopAll('SIGKILL')
}
