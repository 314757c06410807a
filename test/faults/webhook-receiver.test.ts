import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startGateway, waitFor } from '../helpers/gateway.ts'
import { startReceiver } from '../helpers/receiver.ts'

const test = suite('a webhook receiver that never answers')

const DEVICE_PHONE = '5511999990001'
const FRIEND = '5511988880002'

test('its attempts time out and are retried while the API keeps answering every request', async () => {
  const stuck = await startReceiver(() => ({ status: 200, delayMs: 3_600_000 }))
  const t = await startGateway({ allowPrivateUrls: true, webhookTimeoutMs: 300, webhookRetryMs: [100] })
  const failures: { eventId: string; attempt: number; error?: string }[] = []
  t.gateway.events.on('delivery-failed', failure => failures.push(failure))
  try {
    const { authkey } = await t.register()
    const device = await t.linkedDevice(authkey, 'loja', DEVICE_PHONE, { webhook: stuck.url })
    for (let i = 0; i < 30; i++) await t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: `mensagem ${i}` })
    await stuck.waitForHooks(1)
    // The API answers every request while no delivery has ever been answered.
    for (let i = 0; i < 20; i++) {
      const sent = await t.post('/api/create-message', { appkey: device.appkey, authkey, to: FRIEND, message: `resposta ${i}` })
      assert.is(sent.status, 200, sent.text)
    }
    assert.is(stuck.answered, 0)
    // Attempts time out (an error, no status) and the same events are tried again.
    await waitFor(() => failures.some(f => f.attempt >= 2), 10_000, 'a second attempt of an event')
    assert.ok(
      failures.every(f => f.error !== undefined),
      'every failure is a time-out without a status',
    )
    assert.is(stuck.answered, 0)
  } finally {
    await t.stop()
    await stuck.stop()
  }
})

test.run()
