import { test } from 'uvu'
import * as assert from 'uvu/assert'
import QRCode from 'qrcode'
import { baileysTransport } from '../../adapters/transport-baileys/index.ts'
import { FakeBaileys } from '../helpers/fake-baileys/index.ts'
import { startGateway, waitFor } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'

// WhatsApp's QR references ran out (the link ended unscanned, status closed) well within the 60 s the gateway keeps a QR:
// the share page showed the dead QR (which no phone can scan) instead of asking for a fresh one.
test('the share page of a link whose QR codes ran out unscanned shows a fresh QR, never the dead one', async () => {
  const fake = new FakeBaileys()
  const transport = baileysTransport({ ...fake.transportOptions(), reconnect: { initialDelayMs: 5, maxDelayMs: 40, jitter: 0 } })
  const t = await startGateway({ transport, allowPrivateUrls: true })
  try {
    const { authkey } = await t.register()
    const answer = await t.post('/api/developer', { authkey, message: 'loja', conecteQR: 'true' })
    assert.is(answer.status, 200, answer.text)
    const expired = fake.current(answer.body.id)
    const last = expired.showQr() // a refresh, then the references run out
    await waitFor(async () => (await request(`${answer.body.link}/state`)).body.qrcode === (await QRCode.toDataURL(last, { margin: 2, scale: 6 })))
    await expired.expireQr()
    const status = async () => (await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' })).body.dispositivo?.estado
    await waitFor(async () => (await status()) === 'closed', 5_000, 'closed')

    const state = await request(`${answer.body.link}/state`)
    const fresh = fake.current(answer.body.id)
    assert.is.not(fresh, expired, 'a new link started for the page')
    assert.equal(state.body, { conectado: false, qrcode: await QRCode.toDataURL(fresh.qrs[0], { margin: 2, scale: 6 }) })
  } finally {
    await t.stop()
  }
})

test.run()
