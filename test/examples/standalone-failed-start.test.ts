import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { runStandaloneToExit, tempDir } from '../helpers/standalone.ts'

/**
 * A start that createGateway refuses, after the port was bound and the store opened: the process
 * closes what it opened before it exits non-zero with one line saying why.
 */
const test = suite<{ dirs: string[] }>('examples/standalone.ts: a start createGateway refuses', { dirs: [] })
test.after(ctx => {
  for (const dir of ctx.dirs) rmSync(dir, { recursive: true, force: true })
})

test('an option createGateway refuses: exit code 1, one line naming it, and the SQLite store closed (its -wal and -shm files removed)', async ctx => {
  const dir = tempDir()
  ctx.dirs.push(dir)
  // Accepted as read (any text is a secret to the server), refused by createGateway once the store is open.
  const { code, output } = await runStandaloneToExit({ PORT: '0', GATEWAY_CLUSTER_SECRET: 'short' }, dir)
  assert.is(code, 1, output)
  const fatal = output.split('\n').filter(line => line.includes('"level":60'))
  assert.is(fatal.length, 1, output)
  assert.is(JSON.parse(fatal[0]!).msg, 'createGateway: cluster.secret must be a string of at least 16 characters (GATEWAY_CLUSTER_SECRET)')
  assert.not.match(output, 'closing after a failed start', 'every close succeeded')
  // The store was opened (in WAL mode), then closed: SQLite removes the log and its index when the last
  // connection closes. A process that exits with the store still open leaves both behind.
  assert.equal(readdirSync(join(dir, 'data')), ['gateway-memory.sqlite'], 'the store file alone')
  assert.not.ok(existsSync(join(dir, 'data/gateway-memory.sqlite-wal')))
})

test.run()
