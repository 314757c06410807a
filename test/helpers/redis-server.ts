import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createConnection } from 'node:net'
import { waitFor } from './gateway.ts'
import type { Service } from './requires.ts'

/** The redis-server program, for tests that start a Redis of their own (see `needing` in requires.ts). */
export const REDIS_SERVER: Service = {
  name: 'the redis-server program',
  value: spawnSync('redis-server', ['--version']).status === 0 ? 'redis-server' : undefined,
  how: 'apt-get install -y redis-server',
}

/**
 * A redis-server of the test's own on `port` (never the shared one), persisting every write to
 * `dir` with an append-only file, so that a restart on the same port and directory keeps the data.
 */
export async function startRedis(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir],
    { stdio: 'ignore' },
  )
  await waitFor(() => pingable(port), 10_000, `redis-server on port ${port}`)
  return child
}

/** SIGKILL a redis-server started by startRedis and wait for it to exit. */
export async function killRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise(resolve => child.once('exit', resolve))
  child.kill('SIGKILL')
  await exited
}

// --- Internal helpers ---

function pingable(port: number): Promise<boolean> {
  return new Promise(resolve => {
    const socket = createConnection({ port, host: '127.0.0.1' }, () => socket.write('PING\r\n'))
    socket.once('data', data => (socket.destroy(), resolve(data.toString().startsWith('+PONG'))))
    socket.once('error', () => resolve(false))
  })
}
