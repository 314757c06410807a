import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { waitFor } from '../helpers/gateway.ts'
import { accounts, registration } from '../helpers/accounts-cli.ts'
import { NODE_TS } from '../helpers/node-ts.ts'
import { post } from '../helpers/http.ts'
import { needing, REDIS } from '../helpers/requires.ts'
import { startStandalone, tempDir, type StandaloneServer } from '../helpers/standalone.ts'
import { clearStore } from '../../bench/lib/stores.ts'

const run = promisify(execFile)
const root = new URL('../..', import.meta.url).pathname
/** examples/accounts.ts, as `npm run accounts` runs it. */
const test = suite('npm run accounts: the operator command beside running servers')

const accepted = async (url: string, authkey: string) =>
  (await post(`${url}/api/developer`, { authkey, message: 'nada', checkDispositivo: 'true' })).status === 404

test("rotate, suspend, resume and renew a server's account from beside it (SQLite file); bad input exits non-zero with the reason", async () => {
  const env = { GATEWAY_STORE: `sqlite://${join(tempDir(), 'gateway.sqlite')}`, GATEWAY_RATE_LIMIT: 'off' }
  const server = await startStandalone(env)
  try {
    const { authkey } = (await post(`${server.url}/api/auth`, registration)).body.data
    assert.ok(await accepted(server.url, authkey))
    const rotated = await accounts(env, 'rotate', 'ana@example.com')
    assert.is(rotated.code, 0, rotated.err)
    const fresh = JSON.parse(rotated.out).authkey as string
    await new Promise(resolve => setTimeout(resolve, 300))
    assert.not.ok(await accepted(server.url, authkey), 'the old key is refused')
    assert.ok(await accepted(server.url, fresh), 'the new key works')
    assert.is((await accounts(env, 'suspend', 'ana@example.com')).code, 0)
    await new Promise(resolve => setTimeout(resolve, 300))
    assert.not.ok(await accepted(server.url, fresh), 'suspended')
    assert.equal(JSON.parse((await accounts(env, 'resume', 'ana@example.com')).out).suspended, false)
    await new Promise(resolve => setTimeout(resolve, 300))
    assert.ok(await accepted(server.url, fresh), 'resumed')
    const renewed = JSON.parse((await accounts(env, 'renew', 'ana@example.com', '1')).out)
    assert.match(renewed.expiresOn, /^\d{4}-\d{2}-\d{2}$/)
    const unknown = await accounts(env, 'renew', 'ninguem@example.com')
    assert.equal([unknown.code, unknown.err.trim()], [1, 'account-not-found'])
    const badPlan = await accounts(env, 'renew', 'ana@example.com', '99')
    assert.equal([badPlan.code, badPlan.err.trim()], [1, 'invalid-input: unknown plan "99"'])
    assert.is((await accounts(env, 'explode', 'ana@example.com')).code, 2)
  } finally {
    await server.kill('SIGKILL')
  }
})

const onRedis = needing(test, REDIS, 'the account command across two gateway processes')

onRedis('a key rotated by the command stops working on both of two gateway processes on one Redis at their next cache-epoch poll', async () => {
  const env = {
    GATEWAY_STORE: REDIS.value!,
    GATEWAY_STORE_NAMESPACE: `acc-${randomBytes(4).toString('hex')}`,
    GATEWAY_CLUSTER_SECRET: randomBytes(24).toString('base64url'),
    GATEWAY_RATE_LIMIT: 'off',
  }
  const servers: StandaloneServer[] = []
  try {
    for (let i = 0; i < 2; i++) servers.push(await startStandalone(env))
    const { authkey } = (await post(`${servers[0]!.url}/api/auth`, registration)).body.data
    for (const server of servers) assert.ok(await accepted(server.url, authkey), 'accepted (and cached) by both')
    assert.is((await accounts(env, 'rotate', 'ana@example.com')).code, 0)
    // Each asked until it refuses the key, for at most 1.5 s: the epoch is polled every 100 ms.
    for (const server of servers) await waitFor(async () => !(await accepted(server.url, authkey)), 1_500, `the old key to be refused by ${server.url}`)
  } finally {
    for (const server of servers) await server.kill('SIGKILL')
    await clearStore(env.GATEWAY_STORE, env.GATEWAY_STORE_NAMESPACE) // the shared Redis keeps no keys of the run (they have no ttl)
  }
})

test("without GATEWAY_STORE it opens the store npm start uses with the same variables: the peer server's file, never the real WhatsApp one", async () => {
  const dir = tempDir()
  const { GATEWAY_STORE: _unset, ...inherited } = process.env
  const cli = (env: Record<string, string>) =>
    run(process.execPath, [...NODE_TS, join(root, 'examples/accounts.ts'), 'show', 'ana@example.com'], {
      cwd: dir,
      env: { ...inherited, ...env },
    }).then(
      () => ({ code: 0, err: '' }),
      (error: { code: number; stderr: string }) => ({ code: error.code, err: error.stderr }),
    )
  const peer = await cli({ GATEWAY_WA_PEER: 'http://127.0.0.1:9' })
  assert.is(peer.code, 1, peer.err) // no such account: the store opened is the peer server's
  assert.ok(existsSync(join(dir, 'data/gateway-wa-peer.sqlite')), 'the peer server store')
  assert.not.ok(existsSync(join(dir, 'data/gateway.sqlite')), 'not the real WhatsApp store')
  const local = await cli({ GATEWAY_WA_PEER: 'local' })
  assert.is(local.code, 2)
  assert.match(local.err, /GATEWAY_WA_PEER=local keeps accounts in the gateway process only/)
})

test.run()
