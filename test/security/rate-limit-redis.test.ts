import { randomBytes } from 'node:crypto'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { redisRateLimitStore } from '../../adapters/rate-limit-redis/index.ts'
import { startGateway } from '../helpers/gateway.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'

const url = process.env.REDIS_URL
const test = suite('rate limits in Redis, shared by several gateway processes')

if (!url) {
  console.log('REDIS_URL is not set: skipping the Redis rate-limit tests')
} else {
  test('two gateways on one Redis share the per-account limit', async () => {
    // A namespace of this run's own: other test files use the same Redis, and nothing is flushed.
    const namespace = `zapgate-test-${randomBytes(6).toString('hex')}`
    const stores = [await redisRateLimitStore({ url, namespace }), await redisRateLimitStore({ url, namespace })]
    const rateLimit = { perAccount: { points: 4, duration: 60 } }
    const storage = memoryStorage() // one store for both, as two processes on one database
    const first = await startGateway({ storage, rateLimit, rateLimitStore: stores[0] })
    const second = await startGateway({ storage, rateLimit, rateLimitStore: stores[1] })
    try {
      const { authkey } = await first.register()
      const status = (t: typeof first) => t.post('/api/developer', { authkey, message: 'nenhum', checkDispositivo: 'true' })
      assert.is((await status(first)).status, 404)
      assert.is((await status(second)).status, 404)
      assert.is((await status(first)).status, 404)
      assert.is((await status(second)).status, 404)
      const limited = await status(first)
      assert.is(limited.status, 429)
      assert.ok(Number(limited.headers.get('retry-after')) >= 1)
      assert.is((await status(second)).status, 429)
    } finally {
      await first.stop()
      await second.stop()
      for (const store of stores) await store.close?.()
    }
  })
}

test.run()
