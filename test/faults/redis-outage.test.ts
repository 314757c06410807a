import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import type { Storage } from '../../src/index.ts'
import { startGateway, waitFor, type TestGateway } from '../helpers/gateway.ts'
import { request, type Answer } from '../helpers/http.ts'
import { startReceiver } from '../helpers/receiver.ts'
import { killRedis, REDIS_SERVER, startRedis } from '../helpers/redis-server.ts'
import { needing } from '../helpers/requires.ts'
import { freePort, tempDir } from '../helpers/standalone.ts'

/**
 * The store going away: a gateway on a Redis of its own (started here on a free port, never the
 * shared one), the Redis killed, then started again on the same port with its append-only file.
 * Requests that need the store answer 503; requests answered from cached records go on, and the
 * webhook events they cause wait in memory until the store takes them.
 */
const test = suite('a Redis store that goes away and comes back')

const withRedis = needing(test, REDIS_SERVER, 'the Redis outage test')

withRedis(
  'while Redis is down what needs the store answers 503, a send answered from cached records keeps its webhook event, and it all recovers without a restart',
  async () => {
    const port = await freePort()
    const dir = tempDir('zapgate-redis-')
    let redis = await startRedis(port, dir)
    let t: TestGateway | undefined
    let storage: Storage | undefined
    const receiver = await startReceiver()
    try {
      const url = `redis://127.0.0.1:${port}`
      storage = await storageFromUrl(url)
      // Records read by requests stay cached a minute here, so the outage below starts with warm ones.
      // The rate-limit counters live in this Redis too (the default limits are on): while it is down
      // they count nothing and let requests through.
      t = await startGateway({ storage, allowPrivateUrls: true, cacheTtlMs: 60_000 })
      const { authkey } = await t.register()
      const device = await t.linkedDevice(authkey, 'loja', '5511999990001', { webhook: receiver.url })
      // An account no request has used yet: nothing of it is cached.
      const cold = await t.register()
      // Each request gives up after 20 s, so a hang fails the test instead of holding it.
      const call = (path: string, body: Record<string, unknown>): Promise<Answer> =>
        request(t!.url + path, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(20_000),
        })
      const status = (key = authkey) => call('/api/developer', { authkey: key, message: 'loja', checkDispositivo: 'true' })
      const send = (message: string) => call('/api/create-message', { appkey: device.appkey, authkey, to: '5511988880002', message })
      const before = await send('antes')
      assert.is(before.status, 200)
      await receiver.waitForHooks(1)

      await killRedis(redis)
      // What needs the store cannot be done: a clear 503 the client can retry.
      for (const answer of [
        await status(cold.authkey),
        await call('/api/auth', { auth: 'registrar', nome: 'X', email: 'outage@example.com', senha: 'segredo1', telefone: '5511912345678', plano: '1' }),
      ]) {
        assert.is(answer.status, 503, answer.text)
        assert.equal(answer.body, { status: 503, message: 'Armazenamento indisponível. Tente novamente mais tarde.' })
        assert.is(answer.headers.get('retry-after'), '5')
      }
      // A send whose account and device are cached goes out; its webhook event waits in memory.
      const during = await send('durante')
      assert.is(during.status, 200, during.text)
      await waitFor(() => t!.gateway.webhooks.unrecordedCount === 1, 5000, 'the event to wait in memory')

      redis = await startRedis(port, dir)
      // The cold account has no device: 404 once the store answers again.
      await waitFor(async () => (await status(cold.authkey)).status === 404, 30_000, 'the gateway to reach Redis again')
      const recovered = await status()
      assert.is(recovered.body.dispositivo.id, device.id)
      assert.is(recovered.body.dispositivo.conectado, true)
      // The event of the send made during the outage is stored and delivered once Redis is back.
      const hooks = await receiver.waitForHooks(2, 30_000)
      assert.equal(
        hooks.map(h => [h.payload.event, h.payload.idMessagem, h.payload.text]),
        [
          ['Texto', before.body.id, 'antes'],
          ['Texto', during.body.id, 'durante'],
        ],
      )
      assert.is(t.gateway.webhooks.unrecordedCount, 0)
      assert.is((await send('depois')).status, 200)
    } finally {
      await t?.stop()
      await storage?.close?.()
      await killRedis(redis)
      await receiver.stop()
    }
  },
)

test.run()
