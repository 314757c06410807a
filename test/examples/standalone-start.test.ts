import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:net'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { parseMs } from '../../examples/env-config.ts'
import { waitFor } from '../helpers/gateway.ts'
import { post, request } from '../helpers/http.ts'
import { needing, REDIS } from '../helpers/requires.ts'
import { freePort, runStandaloneToExit, startStandalone, type StandaloneServer } from '../helpers/standalone.ts'

/**
 * How `npm start` (examples/standalone.ts) starts: a port another program holds stops it with one
 * line naming PORT and nothing left open in the store; GATEWAY_SHARE_LINK_TTL_MS sets how long a QR
 * share link works.
 */
const test = suite<{ server?: StandaloneServer; holder?: Server }>('examples/standalone.ts: a port in use, GATEWAY_SHARE_LINK_TTL_MS')
test.after.each(async ctx => {
  await ctx.server?.kill('SIGKILL')
  ctx.server = undefined
  await new Promise(resolve => (ctx.holder ? ctx.holder.close(resolve) : resolve(undefined)))
  ctx.holder = undefined
})
const withRedis = needing(test, REDIS, 'the port-in-use test of npm start')

const register = (url: string) =>
  post(`${url}/api/auth`, { auth: 'registrar', nome: 'Ana', email: 'ana@example.com', senha: 'segredo1', telefone: '5511900000000', plano: '1' })

/** The entries of `namespace` in the test's Redis. */
async function entriesOf(namespace: string): Promise<[string, any][]> {
  const storage = await storageFromUrl(REDIS.value!, { namespace })
  try {
    const entries: [string, any][] = []
    for await (const entry of storage.list('')) entries.push(entry)
    return entries
  } finally {
    await storage.close?.()
  }
}

/** What a gateway process holds in `namespace`: its instance record, and the device leases it has not handed back (`owner: null`). */
async function heldIn(namespace: string): Promise<string[]> {
  const entries = await entriesOf(namespace)
  return entries.filter(([key, value]) => key.startsWith('instance:') || (key.startsWith('device-lease:') && value.owner !== null)).map(([key]) => key)
}

/** Remove every key of `namespace` (this test's own; the shared Redis is never flushed). */
async function removeNamespace(namespace: string): Promise<void> {
  const storage = await storageFromUrl(REDIS.value!, { namespace })
  try {
    for (const [key] of await entriesOf(namespace)) await storage.delete(key)
  } finally {
    await storage.close?.()
  }
}

withRedis(
  'a port another program holds stops the start with exit code 1 and one line naming PORT; no device lease or instance record is left in the store',
  async ctx => {
    const namespace = `port-in-use-${randomBytes(4).toString('hex')}`
    const env = { GATEWAY_STORE: REDIS.value!, GATEWAY_STORE_NAMESPACE: namespace }
    try {
      // A stored device, which a start resumes (its lease taken, its session opened).
      ctx.server = await startStandalone(env)
      const authkey = (await register(ctx.server.url)).body.data.authkey
      assert.is((await post(`${ctx.server.url}/api/v2/qrcode`, { authkey, setAppkey: 'balcao' })).status, 200)
      assert.is(await ctx.server.kill('SIGTERM'), 0)
      ctx.server = undefined
      assert.equal(await heldIn(namespace), [], 'a stopped server leaves neither its record nor a lease it holds')
      assert.ok(
        (await entriesOf(namespace)).some(([key]) => key.startsWith('device-lease:')),
        'the device was resumed (its lease taken, then handed back)',
      )

      const port = await freePort()
      const holder = (ctx.holder = createServer())
      await new Promise<void>(resolve => holder.listen(port, resolve)) // every address, as the server binds
      const { code, output } = await runStandaloneToExit({ ...env, PORT: String(port) })
      assert.is(code, 1, output)
      // A lease or an instance record left behind would hold the device from other instances until its ttl passed.
      assert.equal(await heldIn(namespace), [], 'nothing of the failed start is held in the store')
      const fatal = output.split('\n').filter(line => line.includes('"level":60'))
      assert.is(fatal.length, 1, output)
      assert.match(fatal[0]!, `"msg":"PORT ${port} is in use by another program: stop it, or set PORT to a free port"`)
    } finally {
      await removeNamespace(namespace)
    }
  },
)

test('GATEWAY_SHARE_LINK_TTL_MS: a QR share link answers 404 once that time has passed; 0 or a word stops the start naming the variable', async ctx => {
  ctx.server = await startStandalone({ GATEWAY_STORE: 'memory://', GATEWAY_SHARE_LINK_TTL_MS: '1500' })
  const authkey = (await register(ctx.server.url)).body.data.authkey
  const answer = await post(`${ctx.server.url}/api/developer`, { authkey, message: 'vitrine', conecteQR: 'true' })
  assert.is((await request(answer.body.link)).status, 200, 'a fresh link shows the QR')
  const madeAt = Date.now()
  await waitFor(async () => (await request(answer.body.link)).status !== 200, 10_000, 'the link to expire')
  assert.ok(Date.now() - madeAt < 8000, 'gone after about 1.5 s, not the default 24 h')
  assert.equal((await request(`${answer.body.link}/state`)).body, { status: 404, message: 'Link inválido, expirado ou excluído.' })

  const bounds = { min: 1, max: 365 * 86_400_000 }
  assert.is(parseMs('1500', 'GATEWAY_SHARE_LINK_TTL_MS', bounds), 1500)
  for (const bad of ['0', 'abc', '-5', '1.5', '24h', '31536000001'])
    assert.throws(
      () => parseMs(bad, 'GATEWAY_SHARE_LINK_TTL_MS', bounds),
      /GATEWAY_SHARE_LINK_TTL_MS must be a whole number of milliseconds from 1 to 31536000000/,
    )
  for (const bad of ['0', '24h']) {
    const { code, output } = await runStandaloneToExit({ GATEWAY_STORE: 'memory://', PORT: '0', GATEWAY_SHARE_LINK_TTL_MS: bad })
    assert.is(code, 1, output)
    assert.match(output, `GATEWAY_SHARE_LINK_TTL_MS must be a whole number of milliseconds from 1 to 31536000000 (got \\"${bad}\\")`)
  }
})

test.run()
