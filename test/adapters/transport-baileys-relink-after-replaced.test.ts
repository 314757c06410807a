import { test } from 'uvu'
import * as assert from 'uvu/assert'
import QRCode from 'qrcode'
import { baileysTransport } from '../../adapters/transport-baileys/index.ts'
import { FakeBaileys } from '../helpers/fake-baileys/index.ts'
import { connectedBaileysDevice } from '../helpers/baileys-gateway.ts'
import { startGateway, waitFor } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'

// A device linked once, replaced by another client (440), then linked afresh by operation 3 (its credentials wiped): the device
// stayed "linked" in the gateway's record, so once that new QR ran out unscanned its share page never asked for another one.
test('a relink of a replaced device whose QR ran out unscanned: its share page shows a fresh QR', async () => {
  const fake = new FakeBaileys()
  const transport = baileysTransport({ ...fake.transportOptions(), reconnect: { initialDelayMs: 5, maxDelayMs: 40, jitter: 0 } })
  const t = await startGateway({ transport, allowPrivateUrls: true })
  try {
    const { authkey } = await t.register()
    const device = await connectedBaileysDevice(t, fake, authkey)
    const estado = async () => (await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' })).body.dispositivo?.estado
    await fake.current(device.id).replaced()
    await waitFor(async () => (await estado()) === 'replaced', 5_000, 'replaced')
    const answer = await t.post('/api/v2/qrcode', { authkey, setAppkey: 'loja' })
    assert.is(answer.status, 200, answer.text)
    const expired = fake.current(device.id)
    assert.is(expired.config.auth.creds.account, undefined, 'a fresh link: the replaced credentials are gone')
    await expired.expireQr()
    await waitFor(async () => (await estado()) === 'closed', 5_000, 'closed')

    const state = await request(`${answer.body.link}/state`)
    const fresh = fake.current(device.id)
    assert.is.not(fresh, expired, 'a new link started for the page')
    assert.equal(state.body, { conectado: false, qrcode: await QRCode.toDataURL(fresh.qrs[0], { margin: 2, scale: 6 }) })
  } finally {
    await t.stop()
  }
})

test.run()
