import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { internalsOf } from '../../src/internals.ts'
import { startGateway, waitFor } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'

/**
 * Operation 4 (a QR and its share link), then operation 3 with `phone` for the same device (a
 * pairing code). Before, the share page went on showing the first QR, which no longer linked the
 * device, and once that QR's 60 s were over the page's poll started a new QR link, which voided the
 * pairing code: the phone entering it was refused.
 */
test('a pairing code asked after a QR: the share page shows no dead QR and never voids the code', async () => {
  const t = await startGateway()
  try {
    const { authkey } = await t.register()
    const first = await t.post('/api/developer', { authkey, message: 'balcao', conecteQR: 'true' })
    const pairing = await t.post('/api/v2/qrcode', { authkey, setAppkey: 'balcao', phone: '5511933334444' })
    assert.is(pairing.status, 200)
    assert.equal((await request(`${first.body.link}/state`)).body, { conectado: false, qrcode: null }, 'the first QR no longer links the device')

    await internalsOf(t.gateway).storage.delete(`qr:${first.body.id}`) // the first QR's 60 s are over
    await request(`${first.body.link}/state`) // the page polls
    await request(first.body.link)
    await t.network.scan(pairing.body.code, '5511933334444')
    await waitFor(async () => (await t.post('/api/developer', { authkey, message: 'balcao', checkDispositivo: 'true' })).body.dispositivo?.conectado === true)
    assert.equal((await request(`${first.body.link}/state`)).body, { conectado: true, qrcode: null })
  } finally {
    await t.stop()
  }
})

test('a QR asked after a pairing code is shown again by the page', async () => {
  const t = await startGateway()
  try {
    const { authkey } = await t.register()
    await t.post('/api/v2/qrcode', { authkey, setAppkey: 'balcao', phone: '5511933334444' })
    const qr = await t.post('/api/developer', { authkey, message: 'balcao', conecteQR: 'true' })
    assert.equal((await request(`${qr.body.link}/state`)).body, { conectado: false, qrcode: qr.body.qrcode })
    await internalsOf(t.gateway).storage.delete(`qr:${qr.body.id}`) // its 60 s are over: the page asks for a fresh one
    assert.match((await request(`${qr.body.link}/state`)).body.qrcode, /^data:image\/png;base64,/)
  } finally {
    await t.stop()
  }
})

test.run()
