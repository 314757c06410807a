import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startGateway, waitFor } from '../../helpers/gateway.ts'
import { startReceiver } from '../../helpers/receiver.ts'

const test = suite('webhook delivery: a slow receiver holds up nobody else')

const SLOW_PHONE = '5511999990001'
const FAST_PHONE = '5511999990002'
const FRIEND = '5511988880003'

test('a receiver taking 10 s per request delays neither the API nor another device’s deliveries', async () => {
  const slow = await startReceiver(() => ({ status: 200, delayMs: 10_000 }))
  const fast = await startReceiver()
  const t = await startGateway({ allowPrivateUrls: true })
  try {
    const { authkey } = await t.register()
    const slowDevice = await t.linkedDevice(authkey, 'slow', SLOW_PHONE, { webhook: slow.url })
    const fastDevice = await t.linkedDevice(authkey, 'fast', FAST_PHONE, { webhook: fast.url })

    // More events than the slow device has delivery slots, so some of them wait.
    for (let i = 0; i < 20; i++) await t.network.sendFromPhone(FRIEND, SLOW_PHONE, { type: 'text', text: `lento ${i}` })
    await slow.waitForHooks(1)

    // The API answers while the slow receiver has not answered a single request.
    const status = await t.post('/api/developer', { authkey, message: 'fast', checkDispositivo: 'true' })
    assert.is(status.status, 200)
    assert.is(slow.answered, 0, 'the API answered before the slow receiver did')

    // The other device's event arrives while the slow receiver is still busy with its first requests.
    const id = await t.network.sendFromPhone(FRIEND, FAST_PHONE, { type: 'text', text: 'rápido' })
    await fast.waitForHooks(1, 8_000)
    assert.is(slow.answered, 0, 'the fast device was delivered before the slow receiver answered once')
    assert.is(JSON.parse(fast.hooks[0].body).idMessagem, id)
    assert.is(fast.verified(fastDevice.webhookSecret).length, 1)

    // The slow device is bounded: it never has more than its slots in flight.
    assert.ok(slow.hooks.length <= 8, `${slow.hooks.length} requests in flight to the slow receiver`)
    assert.is(await t.gateway.webhooks.pending(slowDevice.id), 20)
    await waitFor(() => slow.answered >= 1, 20_000, 'the slow receiver to answer')
  } finally {
    await t.stop()
    await slow.stop()
    await fast.stop()
  }
})

test.run()
