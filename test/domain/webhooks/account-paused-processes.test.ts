import { randomBytes } from 'node:crypto'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { storageFromUrl } from '../../../adapters/storage-keyv/index.ts'
import { accounts } from '../../helpers/accounts-cli.ts'
import { startGateway, waitFor } from '../../helpers/gateway.ts'
import { pausedWorld } from '../../helpers/paused-webhooks.ts'
import { needing } from '../../helpers/requires.ts'
import { processStores } from '../../helpers/shared-backends.ts'

/**
 * The account is suspended, then resumed, by another node process on the same store (the operator's
 * `npm run accounts`, test/helpers/accounts-cli.ts): the gateway holding the device's events sees
 * both through the cache epoch, holds the events meanwhile, and delivers them, in their order, once
 * the other process resumed the account (without waiting for the minute's recheck).
 */
const test = suite('webhooks held for a suspended account are delivered when another process resumes it')

for (const [name, url, service] of processStores('zapgate-paused-')) {
  needing(
    test,
    service,
    `paused webhooks on ${name}`,
  )(`on ${name}`, async () => {
    const namespace = `zapgate-test-${randomBytes(4).toString('hex')}`
    const storage = await storageFromUrl(url!, { namespace })
    const w = await pausedWorld(options => startGateway({ ...options, storage }))
    const env = { GATEWAY_STORE: url!, GATEWAY_STORE_NAMESPACE: namespace }
    const refused = async () => (await w.t.post('/api/developer', { authkey: w.authkey, message: 'pausada', checkDispositivo: 'true' })).status === 401
    try {
      const suspended = await accounts(env, 'suspend', w.email)
      assert.is(suspended.code, 0, suspended.err)
      await waitFor(refused, 10_000, 'the suspension to reach the gateway')
      const ids = await w.receive(['um', 'dois', 'três'])
      await w.heldOrSent(3)
      assert.equal(w.sent(), [], 'nothing was sent while suspended')
      assert.equal(await w.attemptsStored(), [0, 0, 0])
      const resumed = await accounts(env, 'resume', w.email)
      assert.is(resumed.code, 0, resumed.err)
      // Well within the minute's recheck: the resume woke the held events.
      await waitFor(() => w.sent().length === 3, 20_000, 'the held events, after the other process resumed the account')
      assert.equal(w.sent(), ids, 'in their order')
      // A `delivery` event follows the store's record of the delivery, a moment after the POST arrived.
      await waitFor(() => w.events.delivery.length === 3, 10_000, 'the three delivery events')
      assert.equal(w.events['delivery-failed'], [])
      assert.equal(
        w.events.delivery.map(d => d.attempt),
        [1, 1, 1],
      )
    } finally {
      await w.t.stop()
      for await (const [key] of storage.list('')) await storage.delete(key)
      await storage.close!()
    }
  })
}

test.run()
