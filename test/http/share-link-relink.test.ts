import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { internalsOf } from '../../src/internals.ts'
import { startGateway, waitFor } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'

/**
 * A share link whose device connected and was logged out from the phone since answers 404 for good
 * (docs/api.md, QR share pages). Before, it answered 404 only while the device stayed unlinked: once
 * the device was linked again (operation 4, to another phone), the old link came back to life and
 * told whoever held it, weeks later, that the device was connected.
 */
test('a link spent before a logout from the phone stays 404 after the device is linked again', async () => {
  const t = await startGateway()
  try {
    const { authkey } = await t.register()
    const connected = async () =>
      (await t.post('/api/developer', { authkey, message: 'balcao', checkDispositivo: 'true' })).body.dispositivo?.conectado === true
    const first = await t.post('/api/developer', { authkey, message: 'balcao', conecteQR: 'true' })
    await t.network.scan({ deviceId: first.body.id }, '5511933334444')
    await waitFor(connected)
    await t.network.unlink(first.body.id)
    await waitFor(async () => (await internalsOf(t.gateway).devices.get(first.body.id))?.linked === false)
    assert.is((await request(`${first.body.link}/state`)).status, 404, 'gone once logged out')

    const again = await t.post('/api/developer', { authkey, message: 'balcao', conecteQR: 'true' })
    assert.is(again.status, 200)
    await t.network.scan({ deviceId: first.body.id }, '5511933335555')
    await waitFor(connected)
    assert.is((await request(`${first.body.link}/state`)).status, 404, 'the old link stays gone after the relink')
    assert.is((await request(first.body.link)).status, 404, 'its page too')
    assert.equal((await request(`${again.body.link}/state`)).body, { conectado: true, qrcode: null }, 'the new link says connected')
  } finally {
    await t.stop()
  }
})

test.run()
