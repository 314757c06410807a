import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import PQueue from 'p-queue'
import { parseFlag, parsePort, trustProxy } from '../../examples/env-config.ts'
import { runStandaloneToExit, startStandalone, tempDir } from '../helpers/standalone.ts'
import { startSimulator } from '../helpers/simulator.ts'

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

test("GATEWAY_TRUST_PROXY: any spelling of 0 is off (00 made Koa trust every X-Forwarded-For address, the client's own first); on/off variables take on and off", () => {
  for (const off of ['0', '00', ' 0 ', '']) assert.equal(trustProxy(off), { proxy: false }, JSON.stringify(off))
  assert.equal(trustProxy('2'), { proxy: true, maxIpsCount: 2 })
  assert.equal(
    ['on', 'OFF', '1', 'false', ''].map(text => parseFlag(text, 'X', true)),
    [true, false, true, false, true],
  )
})

/** Start the server with `env` in `dir`, expecting it to stop with exit code 1 and one fatal line: that line's message. */
async function refusedStart(env: Record<string, string>, dir: string): Promise<string> {
  const { code, output } = await runStandaloneToExit({ PORT: '0', ...env }, dir)
  assert.is(code, 1, output)
  const fatal = output.split('\n').filter(line => line.includes('"level":60'))
  assert.is(fatal.length, 1, output)
  return JSON.parse(fatal[0]!).msg
}

test('the numeric variables: a bad or too large value stops the start naming the variable and its range, before the store is opened; empty is unset', async ctx => {
  const cluster = { GATEWAY_CLUSTER_SECRET: 'a-secret-of-sixteen-chars-or-more' }
  const refused: [Record<string, string>, string][] = [
    [{ GATEWAY_MIN_INTERVAL_MS: 'abc' }, 'GATEWAY_MIN_INTERVAL_MS must be a whole number of milliseconds from 0 to 3600000 (got "abc")'],
    [
      { GATEWAY_MEDIA_BUDGET_MB: '99999999999999999999' },
      'GATEWAY_MEDIA_BUDGET_MB must be a whole number of megabytes from 1 to 1048576 (got "99999999999999999999")',
    ],
    [{ GATEWAY_MIN_INTERVAL_MS: '1.5' }, 'GATEWAY_MIN_INTERVAL_MS must be a whole number of milliseconds from 0 to 3600000 (got "1.5")'],
    [{ GATEWAY_INTERVAL_JITTER_MS: '-5' }, 'GATEWAY_INTERVAL_JITTER_MS must be a whole number of milliseconds from 0 to 3600000 (got "-5")'],
    [{ GATEWAY_INTERVAL_JITTER_MS: '3600001' }, 'GATEWAY_INTERVAL_JITTER_MS must be a whole number of milliseconds from 0 to 3600000 (got "3600001")'],
    [{ ...cluster, GATEWAY_MAX_DEVICES: '1.5' }, 'GATEWAY_MAX_DEVICES must be a whole number from 1 to 9007199254740991 (got "1.5")'],
    [
      { ...cluster, GATEWAY_MAX_DEVICES: '99999999999999999999' },
      'GATEWAY_MAX_DEVICES must be a whole number from 1 to 9007199254740991 (got "99999999999999999999")',
    ],
    [{ GATEWAY_SIM_LOG_LIMIT: '0' }, 'GATEWAY_SIM_LOG_LIMIT must be a whole number from 1 to 10000000 (got "0")'],
    // On/off variables: another spelling was taken silently as the default (GATEWAY_DOCS=nope kept the docs on).
    [{ GATEWAY_DOCS: 'nope' }, 'GATEWAY_DOCS must be 1 or 0 (true/false, on/off), got "nope"'],
    [{ GATEWAY_METRICS: 'si' }, 'GATEWAY_METRICS must be 1 or 0 (true/false, on/off), got "si"'],
    // A base URL without a scheme made links like `gw.example.com/qr/…` that open nowhere.
    [{ GATEWAY_BASE_URL: 'gw.example.com' }, 'GATEWAY_BASE_URL must be an absolute http:// or https:// URL without query (got "gw.example.com")'],
    // Past what a Node timer can wait (2^31 - 1 ms: it would fire at once), or past Number.MAX_SAFE_INTEGER.
    [
      { GATEWAY_BODY_TIMEOUT_MS: '99999999999999999999' },
      'GATEWAY_BODY_TIMEOUT_MS must be a whole number of milliseconds from 1 to 2147483647 (got "99999999999999999999")',
    ],
    [{ GATEWAY_SHUTDOWN_GRACE_MS: '2147483648' }, 'GATEWAY_SHUTDOWN_GRACE_MS must be a whole number of milliseconds from 0 to 2147483647 (got "2147483648")'],
    [
      { GATEWAY_SHARE_LINK_TTL_MS: '99999999999999999999' },
      'GATEWAY_SHARE_LINK_TTL_MS must be a whole number of milliseconds from 1 to 31536000000 (got "99999999999999999999")',
    ],
    [
      { ...cluster, GATEWAY_LEASE_TTL_MS: '99999999999999999999' },
      'GATEWAY_LEASE_TTL_MS must be a whole number of milliseconds from 400 to 3600000 (got "99999999999999999999")',
    ],
    [{ ...cluster, GATEWAY_LEASE_TTL_MS: '100' }, 'GATEWAY_LEASE_TTL_MS must be a whole number of milliseconds from 400 to 3600000 (got "100")'],
    // Read without cluster mode too (it sets a single process's wait at start): it was never read there, a bad value ignored.
    [{ GATEWAY_LEASE_TTL_MS: 'abc' }, 'GATEWAY_LEASE_TTL_MS must be a whole number of milliseconds from 400 to 3600000 (got "abc")'],
    [{ GATEWAY_MAX_DEVICES: '5' }, 'GATEWAY_MAX_DEVICES limits an instance of a cluster: set GATEWAY_CLUSTER_SECRET too, or unset it'],
    // Refused before the bind, naming the variable (createGateway's own refusal came after the store was opened and named the option).
    [{ GATEWAY_TIME_ZONE: 'Mars/Olympus' }, 'GATEWAY_TIME_ZONE must be an IANA time zone such as America/Sao_Paulo (got "Mars/Olympus")'],
    [
      { GATEWAY_TRANSPORT: 'baileys', GATEWAY_WA_PEER: 'peer.local:7001' },
      'GATEWAY_WA_PEER must be local or http://host:port of npm run wa-peer, not "peer.local:7001"',
    ],
  ]
  // Four starts at a time: all 21 at once (each a node loading the standalone program) starved some past the 60 s a start
  // may take on a loaded 2-core machine (killed: exit code null), without finishing sooner.
  const starts = new PQueue({ concurrency: 4 })
  await Promise.all(
    refused.map(([env, message]) =>
      starts.add(async () => {
        const dir = tempDir()
        ctx.dirs.push(dir)
        assert.is(await refusedStart(env, dir), message)
        assert.not.ok(existsSync(join(dir, 'data')), `${JSON.stringify(env)}: no store file was created for a start refused`)
      }),
    ),
  )

  // The store is checked as it opens, after the bind: its refusal names the variable, and nothing is left open.
  for (const [env, message] of [
    [{ GATEWAY_STORE: 'foo://x' }, /^GATEWAY_STORE: Unsupported store URL scheme "foo:"/],
    [{ GATEWAY_STORE: 'memory://', GATEWAY_STORE_NAMESPACE: 'a:b' }, /^GATEWAY_STORE \(GATEWAY_STORE_NAMESPACE\): .*namespace/],
  ] as const) {
    const dir = tempDir()
    ctx.dirs.push(dir)
    assert.match(await refusedStart(env, dir), message)
  }

  const unset = { GATEWAY_MIN_INTERVAL_MS: '', GATEWAY_INTERVAL_JITTER_MS: '', GATEWAY_SIM_LOG_LIMIT: '', GATEWAY_BODY_TIMEOUT_MS: '' }
  const server = await startStandalone({ GATEWAY_STORE: 'memory://', ...unset })
  assert.is(await server.kill('SIGTERM'), 0, server.output())

  // `npm run sim` reads GATEWAY_SIM_LOG_LIMIT the same way.
  const failed = await startSimulator({ GATEWAY_SIM_LOG_LIMIT: '1.5' }).then(
    () => 'started',
    (err: Error) => err.message,
  )
  assert.match(failed, 'GATEWAY_SIM_LOG_LIMIT must be a whole number from 1 to 10000000 (got \\"1.5\\")')
})

test.run()
