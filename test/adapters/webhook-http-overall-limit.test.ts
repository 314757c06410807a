import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { httpWebhookSender } from '../../adapters/webhook-http/index.ts'
import { waitFor } from '../helpers/gateway.ts'
import { startGatedReceiver } from './webhook-http-gated-receiver.ts'

const test = suite('httpWebhookSender: the overall limit and one slow receiver host')

const delivery = (url: string, id: string, deviceId: string) => ({ url, body: '{"event":"Texto"}', deviceId, headers: { 'webhook-id': id } })

test('a concurrency at or below concurrencyPerHost still leaves a slot to other hosts: one hung host never takes them all', async () => {
  const slow = await startGatedReceiver()
  const fast = await startGatedReceiver()
  // The overall limit lowered to 4, the per-host one left at its default (8): before, one host could hold all 4.
  const sender = httpWebhookSender({ allowPrivateUrls: true, concurrency: 4, timeoutMs: 3_000 })
  try {
    slow.hold('/hook')
    const held = Array.from({ length: 8 }, (_, i) => sender.send(delivery(`${slow.origin}/hook`, `s_${i}`, `device-${i % 2}`)).catch(() => 0))
    await waitFor(() => slow.to('/hook').length >= 3, 3_000, 'the slow host to get its deliveries')
    const started = Date.now()
    assert.equal(await sender.send(delivery(`${fast.origin}/hook`, 'f_0', 'device-2')), { status: 200 })
    assert.ok(Date.now() - started < 1_000, 'the other host was not kept waiting for the slow one')
    assert.is(slow.to('/hook').length, 3, 'the slow host holds at most concurrency - 1 slots')
    slow.release('/hook')
    await Promise.all(held)
  } finally {
    await sender.close!()
    await slow.stop()
    await fast.stop()
  }
})

test.run()
