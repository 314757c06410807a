import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { randomUUID } from 'node:crypto'
import { waitFor } from '../helpers/gateway.ts'
import { freePort, watch } from '../helpers/standalone.ts'
import { npmEnv } from '../helpers/npm-env.ts'

const root = new URL('../..', import.meta.url).pathname
const test = suite('npm start and npm run sim: a signal to npm stops the server')

const scripts: { script: string; ready: string; env: Record<string, string> }[] = [
  { script: 'start', ready: 'gateway listening', env: { GATEWAY_TRANSPORT: 'memory', GATEWAY_STORE: 'memory://' } },
  { script: 'sim', ready: 'simulator listening', env: {} },
]

for (const { script, ready, env } of scripts)
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    test(`${signal} to the npm ${script === 'start' ? 'start' : `run ${script}`} process stops the server: no process left, the port free`, async () => {
      const port = await freePort()
      const mark = randomUUID() // every process of the tree inherits it: found in /proc/<pid>/environ
      const npm = spawn('npm', script === 'start' ? ['start'] : ['run', script], {
        cwd: root,
        env: npmEnv({ ...env, PORT: String(port), ZAPGATE_TEST_MARK: mark }),
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      const { output, exited } = watch(npm)
      try {
        await waitFor(() => output().includes(ready), 30_000, `the server to listen:\n${output()}`)
        const server = Number(new RegExp(`"pid":(\\d+).*${ready}`).exec(output())?.[1])
        assert.ok(server > 0, 'the server logs its pid')
        assert.equal(marked(mark).includes(server), true, 'the server is one of the processes npm started')

        npm.kill(signal)
        await waitFor(exited, 10_000, 'npm to exit')
        await waitFor(() => marked(mark).length === 0, 10_000, `every process npm started to end (left: ${marked(mark).join(', ')})`)
        assert.ok(output().includes(`"signal":"${signal}"`), 'the server shut down on the signal npm passed on')
        assert.ok(output().includes('"msg":"stopped"'), 'and finished its shutdown')
        assert.ok(await portIsFree(port), `port ${port} is free`)
      } finally {
        for (const pid of marked(mark)) process.kill(pid, 'SIGKILL')
        npm.stdout.destroy()
        npm.stderr.destroy()
      }
    })
  }

/** The live processes (not zombies) whose environment carries `mark`. Linux /proc; elsewhere none are found. */
function marked(mark: string): number[] {
  if (!existsSync('/proc/self/environ')) return []
  const found: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const state = /\)\s+(\S)/.exec(readFileSync(`/proc/${name}/stat`, 'utf8'))?.[1]
      if (state !== 'Z' && readFileSync(`/proc/${name}/environ`, 'utf8').includes(`ZAPGATE_TEST_MARK=${mark}`)) found.push(Number(name))
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise(resolve => {
    const probe = createServer()
    probe.once('error', () => resolve(false))
    probe.listen(port, () => probe.close(() => resolve(true)))
  })
}

test.run()
