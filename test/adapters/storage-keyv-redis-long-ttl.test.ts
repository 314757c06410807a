import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { resolveOptions } from '../../src/resolve-options.ts'
import { withGateway } from '../helpers/gateway.ts'
import { FRIEND, sendingGateway } from '../helpers/messaging.ts'
import { needing, REDIS } from '../helpers/requires.ts'

/**
 * shareLinkTtlMs and otpTtlMs become store ttls. Redis refuses a PX past about 9.2e18 ms ("value is
 * not an integer or out of range"), so a value such as 1e300 was accepted at start and every share
 * link and every OTP then answered 503: they are refused at start instead, above 365 days.
 */
const test = suite('store ttl options: bounded at start')
const redis = needing(test, REDIS, 'long store ttls against Redis')
const YEAR = 365 * 86_400_000

test('shareLinkTtlMs and otpTtlMs above 365 days are refused at start, naming the option; 365 days is taken', () => {
  for (const name of ['shareLinkTtlMs', 'otpTtlMs'] as const) {
    for (const ms of [1e300, Number.MAX_VALUE, YEAR + 1])
      assert.throws(() => resolveOptions({ [name]: ms }), new RegExp(`${name} must be a positive number of ms, at most 365 days`))
  }
  const resolved = resolveOptions({ shareLinkTtlMs: YEAR, otpTtlMs: YEAR })
  assert.deepEqual([resolved.shareLinkTtlMs, resolved.messaging.otpTtlMs], [YEAR, YEAR])
})

redis('on Redis, a share link and an OTP of the longest ttl accepted work (were 503 at 1e300)', async () => {
  const storage = await storageFromUrl(REDIS.value!, { namespace: `long-ttl-${process.pid}` })
  try {
    await withGateway({ storage, shareLinkTtlMs: YEAR }, async t => {
      const { authkey } = await t.register()
      const answer = await t.post('/api/developer', { authkey, message: 'vitrine', conecteQR: 'true' })
      assert.deepEqual([answer.status, typeof answer.body.link], [200, 'string'])
    })
    const g = await sendingGateway({ storage, otpTtlMs: YEAR })
    try {
      assert.equal((await g.send({ to: FRIEND, enviarOTP: 'true' })).status, 200)
    } finally {
      await g.stop()
    }
  } finally {
    for await (const [key] of storage.list('')) await storage.delete(key) // its keys would live a year
    await storage.close?.()
  }
})

test.run()
