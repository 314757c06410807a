import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { redisRateLimitStore } from '../../adapters/rate-limit-redis/index.ts'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import type { RateLimitStore, Storage } from '../../src/index.ts'
import { startGateway, waitFor, type TestGateway } from '../helpers/gateway.ts'
import { request, type Answer } from '../helpers/http.ts'
import { killRedis, redisServerAvailable, startRedis } from '../helpers/redis-server.ts'
import { freePort, tempDir } from '../helpers/standalone.ts'

/**
 * The store going away: a gateway on a Redis of its own (started here on a free port, never the
 * shared one), the Redis killed, then started again on the same port with its append-only file.
 */
const test = suite('a Redis store that goes away and comes back')

if (!redisServerAvailable) {
  console.log('redis-server is not installed: skipping the Redis outage test')
} else {
  test('while Redis is down the API answers 503 with a clear message, and it recovers without a restart', async () => {
    const port = await freePort()
    const dir = tempDir('zapgate-redis-')
    let redis = await startRedis(port, dir)
    let t: TestGateway | undefined
    let storage: Storage | undefined
    let limits: RateLimitStore | undefined
    try {
      const url = `redis://127.0.0.1:${port}`
      storage = await storageFromUrl(url)
      limits = await redisRateLimitStore({ url })
      t = await startGateway({ storage, rateLimitStore: limits })
      const { authkey } = await t.register()
      const device = await t.linkedDevice(authkey, 'loja', '5511999990001')
      // Each request gives up after 20 s, so a hang fails the test instead of holding it.
      const call = (path: string, body: Record<string, unknown>): Promise<Answer> =>
        request(t!.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(20_000) })
      const status = () => call('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' })
      const send = () => call('/api/create-message', { appkey: device.appkey, authkey, to: '5511988880002', message: 'olá' })
      assert.is((await send()).status, 200)

      await killRedis(redis)
      for (const answer of [await status(), await send(), await call('/api/auth', { auth: 'registrar', nome: 'X', email: 'outage@example.com', senha: 'segredo1', telefone: '5511912345678', plano: '1' })]) {
        assert.is(answer.status, 503, answer.text)
        assert.equal(answer.body, { status: 503, message: 'Armazenamento indisponível. Tente novamente mais tarde.' })
        assert.is(answer.headers.get('retry-after'), '5')
      }

      redis = await startRedis(port, dir)
      await waitFor(async () => (await status()).status === 200, 30_000, 'the gateway to reach Redis again')
      const recovered = await status()
      assert.is(recovered.body.dispositivo.id, device.id)
      assert.is(recovered.body.dispositivo.conectado, true)
      assert.is((await send()).status, 200)
    } finally {
      await t?.stop()
      await limits?.close?.()
      await storage?.close?.()
      await killRedis(redis)
    }
  })
}

test.run()
