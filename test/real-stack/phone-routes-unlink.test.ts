import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { qrText } from '../helpers/cluster.ts'
import { waitFor } from '../helpers/gateway.ts'
import { post } from '../helpers/http.ts'
import { startRealStack, type RealStack } from '../helpers/real-stack.ts'

/**
 * `POST /_sim/unlink {authkey, appkey}` on a gateway with the local WhatsApp peer in process
 * (`GATEWAY_WA_PEER=local`, docs/wa-peer.md) unlinks the device however its phone scanned it: by
 * appkey, by the text of its QR or by its pairing code. The peer used to know the device of a
 * scan by appkey only, and answered 404 `device not linked` for a device linked the other ways.
 */
const unlink = suite<RealStack>('unlinking by appkey a device the local peer linked by QR text or code')

const SHOP = '5511999990001'
const OTHER = '5511977770003'

unlink.before(async world => {
  Object.assign(world, await startRealStack({ link: false }))
})

unlink.after(async world => {
  await world.close?.()
})

unlink('linked by the text of its QR, then unlinked by appkey: 200, and the device is logged out', async world => {
  const { t, authkey } = world
  const created = await t.post('/api/v2/qrcode', { authkey, setAppkey: 'loja', webhook: world.receiver.url })
  assert.is(created.status, 200, created.text)
  const scanned = await post(`${t.url}/_sim/scan`, { qr: qrText(created.body.qrcode), phone: SHOP })
  assert.is(scanned.status, 200, scanned.text)
  await waitFor(async () => (await world.status('loja')).conectado === true, 10_000, 'loja connected')
  const unlinked = await post(`${t.url}/_sim/unlink`, { authkey, appkey: 'loja' })
  assert.equal([unlinked.status, unlinked.body.message], [200, 'device unlinked'])
  await waitFor(async () => (await world.status('loja')).estado === 'logged-out', 10_000, 'loja logged out')
})

unlink('linked by its pairing code, then unlinked by appkey: 200, and the device is logged out', async world => {
  const { t, authkey } = world
  const created = await t.post('/api/v2/qrcode', { authkey, setAppkey: 'balcao', webhook: world.receiver.url, phone: OTHER })
  assert.is(created.status, 200, created.text)
  assert.type(created.body.code, 'string', created.text)
  const scanned = await post(`${t.url}/_sim/scan`, { code: created.body.code, phone: OTHER })
  assert.is(scanned.status, 200, scanned.text)
  await waitFor(async () => (await world.status('balcao')).conectado === true, 10_000, 'balcao connected')
  const unlinked = await post(`${t.url}/_sim/unlink`, { authkey, appkey: 'balcao' })
  assert.equal([unlinked.status, unlinked.body.message], [200, 'device unlinked'])
  await waitFor(async () => (await world.status('balcao')).estado === 'logged-out', 10_000, 'balcao logged out')
})

unlink.run()
