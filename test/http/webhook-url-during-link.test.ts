import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startGateway, type TestGateway } from '../helpers/gateway.ts'
import { internalsOf } from '../../src/internals.ts'

/**
 * Operation 3 or 4 stores its `webhook` once the link has started (docs/decisions.md), which can take
 * seconds on the network. The URL it stores is the one it was asked for, whatever happened to the
 * device's URL meanwhile: before, it was compared with the device as read when the request began, so
 * a URL that a receiver's 410 cleared meanwhile (or another request changed) was not set again, and the
 * webhook stayed off (or on the other URL) after a 200.
 */
const test = suite('the webhook of operations 3 and 4 while the link starts')

const HOOK = 'https://hooks.example.com/zap'

/** Hold the transport's next links until the returned `release` is called; `entered` resolves once one is waiting. */
function holdLinks(t: TestGateway) {
  const transport = internalsOf(t.gateway).transport
  const link = transport.link.bind(transport)
  let release!: () => void
  let entered!: () => void
  const [gate, inLink] = [new Promise<void>(r => (release = r)), new Promise<void>(r => (entered = r))]
  Object.assign(transport, { link: async (...args: Parameters<typeof link>) => (entered(), await gate, link(...args)) })
  return { entered: inLink, release }
}

const webhookOf = async (t: TestGateway, authkey: string, name: string) =>
  (await t.post('/api/developer', { authkey, message: name, checkDispositivo: 'true' })).body.dispositivo.webhook

test("operation 3 sets the webhook again when a receiver's 410 cleared it while the link started", async () => {
  const t = await startGateway()
  try {
    const { authkey } = await t.register()
    const device = await t.addDevice(authkey, 'loja', { webhook: HOOK })
    const held = holdLinks(t)
    const linking = t.post('/api/v2/qrcode', { authkey, setAppkey: 'loja', webhook: HOOK })
    await held.entered
    // What a 410 from the receiver does (src/domain/webhooks/attempt.ts, gone): the device's URL is cleared.
    await internalsOf(t.gateway).devices.update(device.id, d => void (d.webhookUrl = undefined))
    held.release()
    assert.is((await linking).status, 200)
    assert.is(await webhookOf(t, authkey, 'loja'), HOOK, 'the webhook asked for is on')
  } finally {
    await t.stop()
  }
})

test('operation 4 stores the webhook it was asked for when another request changed it while the link started', async () => {
  const t = await startGateway()
  try {
    const { authkey } = await t.register()
    const add = (webhook: string) => t.post('/api/developer', { authkey, message: 'recepcao', conecteQR: 'true', webhook })
    assert.is((await add(HOOK)).status, 200)
    const held = holdLinks(t)
    const first = add('https://other.example.com/hook')
    await held.entered
    const second = add(HOOK) // read the device (webhook HOOK) before the first stored its URL
    await new Promise(resolve => setTimeout(resolve, 100))
    held.release()
    assert.is((await first).status, 200)
    assert.is((await second).status, 200)
    assert.is(await webhookOf(t, authkey, 'recepcao'), HOOK, 'the URL of the request that stored last')
  } finally {
    await t.stop()
  }
})

test.run()
