import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { setupBaileys, type SetupOptions } from '../helpers/baileys-setup.ts'
import { settle, waitFor } from '../helpers/fake-baileys/index.ts'
import { RecordingStorage } from '../helpers/recording-storage.ts'
import { transportRejection } from '../helpers/transport-errors.ts'

const network = suite('Baileys transport: ordinary network events (refused upgrades, DNS, silence, stalls)')

const ME = '5511999990000'
const last = (s: { statuses(id: string): { state: string; reason?: string }[] }) => s.statuses('dev').at(-1)

/** A linked, open device whose later sockets do not open by themselves (the test drives them). */
async function openDevice(options: SetupOptions = {}) {
  const storage = new RecordingStorage()
  const s = await setupBaileys({ storage, behaviour: { autoOpen: false }, ...options })
  await s.transport.link('dev', {})
  await s.fake.completeLink('dev', ME)
  await waitFor(() => last(s)?.state === 'open', 'open')
  return { ...s, storage }
}

network('a refused WebSocket upgrade (a proxy answers 403) is closed at once and retried with back-off; credentials kept, the status says why', async () => {
  const s = await openDevice()
  await s.fake.current('dev').close(500)
  await waitFor(() => s.fake.sockets.length === 3, 'the reconnect socket')
  const refused = s.fake.current('dev')
  refused.refuseUpgrade(403)
  await waitFor(() => refused.closed, 'the refused socket ended by the adapter (Baileys never closes it)')
  assert.ok(refused.endedWith instanceof Error && !('isBoom' in refused.endedWith), 'ended with a plain Error: the 403 is not read as WhatsApp\'s "forbidden"')
  await waitFor(() => /refused the connection: HTTP 403 at the WebSocket upgrade.*reconnecting in/.test(last(s)?.reason ?? ''), 'the reason')
  assert.is(last(s)?.state, 'connecting')
  await waitFor(() => s.fake.sockets.length === 4, 'retried')
  assert.is(s.storage.keys('device:dev:auth:creds').length, 1, 'credentials kept')
  s.fake.current('dev').open()
  await waitFor(() => last(s)?.state === 'open', 'open again')
  await s.transport.stop()
})

network('a socket that neither opens nor shows a QR within openTimeoutMs is closed and retried with back-off; the status says why', async () => {
  const s = await openDevice({ openTimeoutMs: 80 })
  await s.fake.current('dev').close(500)
  await waitFor(() => s.fake.sockets.length === 3, 'the reconnect socket')
  const silent = s.fake.current('dev')
  await waitFor(() => silent.closed, 'closed by the watch', 1_000)
  assert.ok(Date.now() - silent.createdAt >= 75, 'not before openTimeoutMs')
  assert.match(last(s)?.reason ?? '', /^no connection to WhatsApp within 80 ms; reconnecting in/)
  await waitFor(() => s.fake.sockets.length === 4, 'retried')
  s.fake.current('dev').open()
  await waitFor(() => last(s)?.state === 'open', 'open')
  await new Promise(resolve => setTimeout(resolve, 150))
  assert.not.ok(s.fake.current('dev').closed, 'an open socket is never closed by the watch')
  await s.transport.stop()
})

network('a socket showing a QR (waiting for the scan) is never closed by the watch', async () => {
  const s = await setupBaileys({ openTimeoutMs: 50 })
  await s.transport.link('dev', {})
  await new Promise(resolve => setTimeout(resolve, 150))
  assert.not.ok(s.fake.current('dev').closed)
  assert.is(last(s)?.state, 'linking')
  await s.transport.stop()
})

network('a DNS failure while linking (ENOTFOUND, code 408 like an expired QR) fails link() with unreachable at once, not "QR expired"', async () => {
  const s = await setupBaileys({ behaviour: { autoQr: false } })
  const link = s.transport.link('dev', {})
  await waitFor(() => s.fake.sockets.length === 1, 'the socket')
  const started = Date.now()
  await s.fake.current('dev').failToConnect('ENOTFOUND')
  const error = await transportRejection(link)
  assert.is(error.code, 'unreachable')
  assert.match(error.message, /WhatsApp cannot be reached from this server \(getaddrinfo ENOTFOUND web\.whatsapp\.com\)/)
  assert.ok(Date.now() - started < 10_000, 'at once, not after the 30 s link timeout')
  assert.equal(last(s), {
    state: 'closed',
    connected: false,
    reason: 'link interrupted: WhatsApp cannot be reached from this server (getaddrinfo ENOTFOUND web.whatsapp.com)',
  })
  await settle(30)
  assert.is(s.fake.sockets.length, 1, 'no retry loop behind a failed link')
  await s.transport.stop()
})

network('a linked device whose network drops (ECONNREFUSED) keeps reconnecting with back-off and says WhatsApp cannot be reached', async () => {
  const s = await openDevice()
  await s.fake.current('dev').close(500)
  await waitFor(() => s.fake.sockets.length === 3, 'the reconnect socket')
  await s.fake.current('dev').failToConnect('ECONNREFUSED', 'connect ECONNREFUSED 157.240.0.53:443')
  await waitFor(
    () => /cannot be reached from this server \(connect ECONNREFUSED 157\.240\.0\.53:443\); reconnecting in/.test(last(s)?.reason ?? ''),
    'the reason',
  )
  assert.is(last(s)?.state, 'connecting')
  await waitFor(() => s.fake.sockets.length === 4, 'retried')
  assert.is(s.storage.keys('device:dev:auth:creds').length, 1)
  await s.transport.stop()
})

network('link() on a linked device that is reconnecting never wipes its credentials (a reason change is not a failed link)', async () => {
  const s = await openDevice({ openTimeoutMs: 300 })
  const creds = s.storage.entries.get('device:dev:auth:creds')?.json
  await s.fake.current('dev').failToConnect('ECONNRESET', 'read ECONNRESET')
  await waitFor(() => last(s)?.state === 'connecting', 'reconnecting')
  // While link() waits, the status changes reason (each retry fails: "reconnecting in ...").
  const link = s.transport.link('dev', {})
  await waitFor(() => s.fake.sockets.length >= 3, 'a retry')
  await s.fake.current('dev').failToConnect('ENOTFOUND')
  const error = await transportRejection(link)
  assert.is(error.code, 'unreachable')
  assert.match(error.message, /linked and reconnecting/)
  assert.is(s.storage.entries.get('device:dev:auth:creds')?.json, creds, 'the credentials are untouched')
  assert.ok(
    s.fake.sockets.every(socket => socket.config.auth.creds.me?.id === `${ME}:7@s.whatsapp.net`),
    'no socket with fresh credentials',
  )
  assert.is(s.qrs('dev').length, 0)
  // When the network comes back during link(), the answer is already-connected.
  const again = s.transport.link('dev', {})
  await waitFor(() => s.fake.current('dev').closed === false && !s.fake.current('dev').opened, 'a pending socket')
  s.fake.current('dev').open()
  assert.is((await transportRejection(again)).code, 'already-connected')
  await s.transport.stop()
})

network('a send that stalls (half-open socket) restarts the socket once, however many sends stalled on it', async () => {
  const s = await openDevice({ sendTimeoutMs: 40, behaviour: { autoOpen: true } })
  const stuck = s.fake.current('dev')
  s.fake.hanging.add('sendMessage')
  const sends = [1, 2, 3].map(n => transportRejection(s.transport.send('dev', '5511888880000', { kind: 'text', text: `m${n}` })))
  for (const error of await Promise.all(sends)) assert.is(error.code, 'timeout')
  s.fake.hanging.delete('sendMessage')
  await waitFor(() => last(s)?.state === 'open' && s.fake.current('dev') !== stuck, 'a new open socket')
  assert.ok(stuck.closed, 'the stalled socket was ended')
  assert.is(s.fake.socketsOf('dev').length, 3, 'one restart for three stalled sends')
  assert.ok(s.statuses('dev').some(status => status.state === 'connecting' && /^stalled: a send timed out; reconnecting in/.test(status.reason ?? '')))
  await s.transport.send('dev', '5511888880000', { kind: 'text', text: 'through' })
  assert.is(s.fake.current('dev').sent.length, 1, 'sends go out on the new socket')
  await s.transport.stop()
})

network.run()
