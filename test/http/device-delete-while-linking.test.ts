import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startGateway } from '../helpers/gateway.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { internalsOf } from '../../src/internals.ts'

/**
 * Operation 6 while operation 3 is still starting the link of that device (the network has not
 * answered the QR yet). Before, the deletion logged the session out first and the link started it
 * again afterwards: operation 3 answered a QR for the deleted device, and a phone scanning it was
 * linked to a session the gateway kept no record of (its session state stayed in the store).
 */
const test = suite('operation 6 during a link')

test('a device deleted while its link starts keeps no session: the QR cannot link a phone', async () => {
  const storage = memoryStorage()
  const t = await startGateway({ storage })
  try {
    const { authkey } = await t.register()
    const device = await t.addDevice(authkey, 'loja')
    const transport = internalsOf(t.gateway).transport
    const link = transport.link.bind(transport)
    let release!: () => void
    let entered!: () => void
    const [gate, inLink] = [new Promise<void>(r => (release = r)), new Promise<void>(r => (entered = r))]
    Object.assign(transport, { link: async (...args: Parameters<typeof link>) => (entered(), await gate, link(...args)) })
    const linking = t.post('/api/v2/qrcode', { authkey, setAppkey: 'loja' })
    await inLink
    const deleting = t.post('/api/developer', { authkey, message: 'loja', apagarDispositivo: 'true' })
    await new Promise(resolve => setTimeout(resolve, 100))
    release()
    await linking
    assert.is((await deleting).status, 200)
    await t.network.scan({ deviceId: device.id }, '5511922223333').catch(() => undefined)
    await t.network.settled()
    assert.is((await transport.status(device.id)).connected, false, 'the deleted device did not connect')
    for await (const [key] of storage.list('transport:')) assert.not.ok(key.includes(device.id), `${key} left behind`)
    const status = await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' })
    assert.is(status.status, 404)
  } finally {
    await t.stop()
  }
})

test.run()
