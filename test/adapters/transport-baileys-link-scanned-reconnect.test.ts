import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { setupBaileys } from '../helpers/baileys-setup.ts'
import { settle, waitFor } from '../helpers/fake-baileys/index.ts'
import { transportRejection } from '../helpers/transport-errors.ts'

// The phone scanned the QR (pair-success, the 515 restart), and the restarted socket closed transiently before it opened: the
// device is linked and reconnecting, never "linking" again; a new link() must not wipe the credentials the phone now lists.
test('a device whose QR was scanned and whose restarted socket closes transiently is connecting, and a new link() keeps its credentials', async () => {
  const s = await setupBaileys({ behaviour: { autoOpen: false }, openTimeoutMs: 2_000 })
  await s.transport.link('dev', {})
  s.fake.current('dev').pair('5511999990000')
  await waitFor(() => s.fake.socketsOf('dev').length === 2, 'the socket after the 515 restart')
  await settle()
  await s.fake.current('dev').close(503)
  await waitFor(() => /reconnecting in/.test(s.statuses('dev').at(-1)?.reason ?? ''), 'the reconnect')
  assert.is(s.statuses('dev').at(-1)?.state, 'connecting', 'linked and reconnecting, not linking')
  const relink = s.transport.link('dev', {})
  await waitFor(() => s.fake.socketsOf('dev').length === 3, 'the reconnect socket')
  const reconnect = s.fake.current('dev')
  assert.ok(reconnect.config.auth.creds.account, 'reconnects with the linked credentials')
  reconnect.open()
  await transportRejection(relink, 'already-connected')
  assert.is(s.fake.socketsOf('dev').length, 3, 'no fresh link started')
  assert.equal(await s.transport.status('dev'), { state: 'open', connected: true, phone: '5511999990000' })
  await s.transport.stop()
})

test.run()
