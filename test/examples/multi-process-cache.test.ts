import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { randomBytes } from 'node:crypto'
import { waitFor } from '../helpers/gateway.ts'
import { post } from '../helpers/http.ts'
import { needing, REDIS } from '../helpers/requires.ts'
import { startStandalone, type StandaloneServer } from '../helpers/standalone.ts'
import { clearStore } from '../../bench/lib/stores.ts'

/**
 * Two standalone gateway processes on one Redis, each caching the records requests read (2 s by
 * default): a device deleted through one is gone for the other at once (within its 100 ms poll of
 * the store's cache epoch), not after the other's cached copy runs out.
 */
const test = suite('record caches of several processes')

const onRedis = needing(test, REDIS, 'the multi-process cache test')

onRedis(
  'a device deleted through one process answers 404 through the other before its cached copy expires (the cache epoch, polled every 100 ms, not the 2 s cache ttl)',
  async () => {
    const env = {
      GATEWAY_STORE: REDIS.value!,
      GATEWAY_STORE_NAMESPACE: `cache-${randomBytes(4).toString('hex')}`,
      GATEWAY_CLUSTER_SECRET: randomBytes(24).toString('base64url'),
      GATEWAY_RATE_LIMIT: 'off',
    }
    const procs: StandaloneServer[] = []
    try {
      for (let i = 0; i < 2; i++) procs.push(await startStandalone(env))
      const [a, b] = procs.map(proc => proc.url)
      const { authkey } = (
        await post(`${a}/api/auth`, { auth: 'registrar', nome: 'Ana', email: 'ana@example.com', senha: 'senha-secreta', telefone: '5511912345678', plano: '1' })
      ).body.data
      assert.is((await post(`${a}/api/v2/qrcode`, { authkey, setAppkey: 'loja' })).status, 200)
      const status = (url: string) => post(`${url}/api/developer`, { authkey, message: 'loja', checkDispositivo: 'true' })
      assert.is((await status(b!)).status, 200, 'b has read (and cached) the device')
      assert.is((await post(`${a}/api/developer`, { authkey, message: 'loja', apagarDispositivo: 'true' })).status, 200)
      // Asked until it answers 404, for at most 1.5 s: b's cached copy (2 s ttl) would still answer 200 then.
      let after = await status(b!)
      await waitFor(async () => (after = await status(b!)).status === 404, 1_500, `b to answer 404 (last: ${after.text})`)
      assert.equal(after.body, { status: 404, message: 'Nenhum dispositivo encontrado.' })
    } finally {
      for (const proc of procs) await proc.kill('SIGKILL')
      await clearStore(env.GATEWAY_STORE, env.GATEWAY_STORE_NAMESPACE) // the shared Redis keeps no keys of the run (they have no ttl)
    }
  },
)

test.run()
