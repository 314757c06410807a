import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { parsePort } from '../../examples/env-config.ts'
import { runStandaloneToExit, startStandalone, tempDir } from '../helpers/standalone.ts'

const test = suite<{ dirs: string[] }>('standalone server: empty and bad values of its environment', { dirs: [] })
test.after(ctx => {
  for (const dir of ctx.dirs) rmSync(dir, { recursive: true, force: true })
})

test('PORT: empty is the default port, not a random one; a bad value stops the start naming PORT, before the store is opened', async ctx => {
  assert.is(parsePort(undefined, 3000), 3000)
  assert.is(parsePort('', 3000), 3000, 'Number("") is 0: the server listened on a port the system chose')
  assert.is(parsePort(' 8080 ', 3000), 8080)
  for (const bad of ['abc', '-1', '70000', '3e3', '80.5']) assert.throws(() => parsePort(bad, 3000), /PORT must be a port number from 0 to 65535/)

  const dir = tempDir()
  ctx.dirs.push(dir)
  const { code, output } = await runStandaloneToExit({ PORT: 'abc' }, dir)
  assert.is(code, 1)
  assert.match(output, 'PORT must be a port number from 0 to 65535 (got \\"abc\\")')
  assert.not.ok(existsSync(join(dir, 'data')), 'no store file was created (nor were the stored devices resumed) for a server that cannot listen')
})

test('GATEWAY_STORE empty is the default store file, not a memory store that forgets every account at restart', async ctx => {
  const dir = tempDir()
  ctx.dirs.push(dir)
  const server = await startStandalone({ GATEWAY_STORE: '' }, undefined, dir)
  assert.is(await server.kill('SIGTERM'), 0)
  assert.ok(server.output().includes('"store":"sqlite://./data/gateway-memory.sqlite"'), server.output())
  assert.ok(existsSync(join(dir, 'data/gateway-memory.sqlite')))
})

test('LOG_LEVEL: empty is info; an unknown level stops the start naming the variable and the levels', async ctx => {
  const server = await startStandalone({ GATEWAY_STORE: 'memory://', LOG_LEVEL: '' })
  assert.is(await server.kill('SIGTERM'), 0)
  assert.ok(server.output().includes('"level":30'), 'logs at info')

  const dir = tempDir()
  ctx.dirs.push(dir)
  const { code, output } = await runStandaloneToExit({ GATEWAY_STORE: 'memory://', PORT: '0', LOG_LEVEL: 'verbose' }, dir)
  assert.is(code, 1)
  assert.match(output, 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "verbose")')
})

test.run()
