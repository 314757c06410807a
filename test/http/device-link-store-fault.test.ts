import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startGateway } from '../helpers/gateway.ts'
import { failingOnce, type FailingMethod } from '../helpers/failing-once-storage.ts'
import { internalsOf } from '../../src/internals.ts'

/**
 * Operations 3 and 4 when the store fails after the link has started (saving the QR, the share link
 * or the pairing mark): the request is refused, and a refused operation 3 or 4 changes nothing
 * (docs/decisions.md, "Devices"): the device it created must not be left behind.
 */
const test = suite('operations 3 and 4: a store failure after the link started')

const cases: { name: string; path: string; body: Record<string, unknown>; method: FailingMethod; prefix: string }[] = [
  { name: 'operation 3, saving the QR', path: '/api/v2/qrcode', body: { setAppkey: 'loja' }, method: 'set', prefix: 'qr:' },
  { name: 'operation 3, making the share link', path: '/api/v2/qrcode', body: { setAppkey: 'loja' }, method: 'set', prefix: 'share-link:' },
  {
    name: 'operation 3 with a phone, saving the pairing mark',
    path: '/api/v2/qrcode',
    body: { setAppkey: 'loja', phone: '5511933334444' },
    method: 'set',
    prefix: 'pairing:',
  },
  { name: 'operation 4, saving the QR', path: '/api/developer', body: { message: 'loja', conecteQR: 'true' }, method: 'set', prefix: 'qr:' },
  { name: 'operation 4, making the share link', path: '/api/developer', body: { message: 'loja', conecteQR: 'true' }, method: 'set', prefix: 'share-link:' },
]

for (const c of cases) {
  test(`${c.name}: the refused request leaves no device`, async () => {
    const { storage, state } = failingOnce(c.method, c.prefix)
    const t = await startGateway({ storage })
    try {
      const { authkey } = await t.register()
      state.armed = true
      const refused = await t.post(c.path, { authkey, ...c.body })
      state.armed = false
      assert.ok(state.failed, 'the store failed')
      assert.ok(refused.status >= 400, `refused: ${refused.status} ${refused.text}`)
      const status = await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' })
      assert.equal([status.status, status.body.message], [404, 'Nenhum dispositivo encontrado.'], 'the device the refused request created is gone')
      const left: string[] = []
      for await (const device of internalsOf(t.gateway).devices.all()) left.push(device.name)
      assert.equal(left, [], 'no device record left')
      const again = await t.post(c.path, { authkey, ...c.body })
      assert.is(again.status, 200, again.text)
    } finally {
      await t.stop()
    }
  })
}

test.run()
