import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { Boom } from '@hapi/boom'
import { setupBaileys, storedDevice } from '../helpers/baileys-setup.ts'
import { settle, waitFor } from '../helpers/fake-baileys/index.ts'
import { transportRejection } from '../helpers/transport-errors.ts'

const link = suite('Baileys transport: linking')

link('link by QR resolves with the first QR and reports later QRs as qr events', async () => {
  const s = await setupBaileys()
  const challenge = await s.transport.link('dev', {})
  const socket = s.fake.current('dev')
  assert.equal(challenge, { kind: 'qr', qr: socket.qrs[0] })
  assert.equal(s.statuses('dev'), [{ state: 'linking', connected: false }])
  assert.equal(await s.transport.status('dev'), { state: 'linking', connected: false })
  const second = socket.showQr()
  const third = socket.showQr()
  await settle()
  assert.equal(s.qrs('dev'), [second, third])
  await s.transport.stop()
})

link('a QR link completes: pair-success, the 515 restart, then open with phone and LID', async () => {
  const s = await setupBaileys()
  await s.transport.link('dev', {})
  await s.fake.completeLink('dev', '5511999990000', { lid: '99887766@lid' })
  await waitFor(() => s.statuses('dev').at(-1)?.state === 'open', 'open')
  assert.equal(
    s.statuses('dev').map(st => st.state),
    ['linking', 'connecting', 'open'],
  )
  assert.equal(await s.transport.status('dev'), { state: 'open', connected: true, phone: '5511999990000', lid: '99887766@lid' })
  await s.transport.stop()
})

link('printQrInTerminal draws every QR to the given stream', async () => {
  const written: string[] = []
  const s = await setupBaileys({ printQrInTerminal: { write: (text: string) => written.push(text) } })
  await s.transport.link('dev', {})
  s.fake.current('dev').showQr()
  await waitFor(() => written.length === 2, 'two QR drawings')
  assert.match(written[0], /Scan this QR in WhatsApp/)
  assert.match(written[0], /[▀▄█]/)
  await s.transport.stop()
})

link('link by pairing code asks WhatsApp for the gateway-chosen code after the first QR', async () => {
  const s = await setupBaileys()
  const challenge = await s.transport.link('dev', { phone: '+55 (11) 99999-0000', code: '12345678' })
  assert.equal(challenge, { kind: 'code', code: '12345678' })
  const socket = s.fake.current('dev')
  const methods = socket.calls.map(c => c.method)
  assert.equal(methods, ['requestPairingCode'])
  assert.equal(socket.calls[0].args, ['5511999990000', '12345678'])
  assert.is(socket.qrs.length, 1, 'requested once the first QR arrived')
  socket.showQr()
  await settle()
  assert.equal(s.qrs('dev'), [], 'QR refreshes are not reported in pairing-code mode')
  assert.equal(socket.calls.filter(c => c.method === 'requestPairingCode').length, 1)
  await s.fake.completeLink('dev', '5511999990000')
  await waitFor(() => s.statuses('dev').at(-1)?.state === 'open', 'open')
  await s.transport.stop()
})

link('a 405 (outdated version) before the pairing code was requested retries with a fresh version; the code is asked on the new socket', async () => {
  let calls = 0
  const s = await setupBaileys({ behaviour: { autoQr: false }, resolveVersion: async () => [2, 3000, ++calls] })
  const challenge = s.transport.link('dev', { phone: '5511999990000', code: 'ABCD2345' })
  await waitFor(() => s.fake.sockets.length === 1, 'the first socket')
  await s.fake.current('dev').close(new Boom('Connection Failure', { statusCode: 405, data: { reason: '405' } }))
  await waitFor(() => s.fake.sockets.length === 2, 'a new socket')
  assert.equal(s.fake.current('dev').config.version, [2, 3000, 2], 'with a freshly resolved version')
  s.fake.current('dev').showQr()
  assert.equal(await challenge, { kind: 'code', code: 'ABCD2345' })
  assert.equal(
    s.fake.sockets.map(socket => socket.calls.filter(c => c.method === 'requestPairingCode').length),
    [0, 1],
  )
  await s.transport.stop()
})

link('a refused pairing code rejects link() and closes the session', async () => {
  const s = await setupBaileys()
  s.fake.failNext('requestPairingCode', new Boom('Connection Closed', { statusCode: 428 }))
  await transportRejection(s.transport.link('dev', { phone: '5511999990000', code: '12345678' }), 'not-connected')
  await waitFor(() => s.statuses('dev').at(-1)?.state === 'closed', 'closed')
  assert.ok(s.fake.current('dev').closed)
  await s.transport.stop()
})

link('link() on an open device throws already-connected', async () => {
  const s = await setupBaileys()
  await s.linked('dev', '5511999990000')
  await transportRejection(s.transport.link('dev', {}), 'already-connected')
  await s.transport.stop()
})

link('link() refuses malformed requests', async () => {
  const s = await setupBaileys()
  await transportRejection(s.transport.link('dev', { phone: '5511999990000' }), 'invalid')
  await transportRejection(s.transport.link('dev', { phone: 'abc', code: '12345678' }), 'invalid')
  await transportRejection(s.transport.link('dev', { phone: '5511999990000', code: '1234' }), 'invalid')
  assert.is(s.fake.sockets.length, 0)
  await s.transport.stop()
})

link('link() times out when WhatsApp shows no QR, and the session closes', async () => {
  const s = await setupBaileys({ behaviour: { autoQr: false }, linkTimeoutMs: 30 })
  await transportRejection(s.transport.link('dev', {}), 'timeout')
  await waitFor(() => s.statuses('dev').at(-1)?.state === 'closed', 'closed')
  assert.is(s.statuses('dev').at(-1)?.reason, 'link timed out')
  assert.ok(s.fake.current('dev').closed)
  assert.is(s.fake.current('dev').endedWith, undefined, 'ended by us')
  await s.transport.stop()
})

link('a new link() replaces a pending one with fresh credentials', async () => {
  const s = await setupBaileys()
  const first = await s.transport.link('dev', {})
  const firstSocket = s.fake.current('dev')
  const second = await s.transport.link('dev', {})
  const secondSocket = s.fake.current('dev')
  assert.is.not(firstSocket, secondSocket)
  assert.ok(firstSocket.closed)
  assert.is.not(first.kind === 'qr' && first.qr, second.kind === 'qr' && second.qr)
  assert.not.equal(Buffer.from(firstSocket.creds.noiseKey.public), Buffer.from(secondSocket.creds.noiseKey.public))
  await s.transport.stop()
})

link('disconnect() while linking ends the socket and reports closed', async () => {
  const s = await setupBaileys()
  await s.transport.link('dev', {})
  await s.transport.disconnect('dev')
  const socket = s.fake.current('dev')
  assert.ok(socket.closed)
  assert.is(socket.endedWith, undefined)
  assert.equal(s.statuses('dev').at(-1), { state: 'closed', connected: false, reason: 'disconnected' })
  await settle()
  assert.is(s.fake.sockets.length, 1)
  await s.transport.stop()
})

link('the socket config: fresh creds, pinned version, quiet presence, no own-event echoes, no undefined keys', async () => {
  const s = await setupBaileys({ socketConfig: { connectTimeoutMs: 12_345, qrTimeout: undefined } })
  await s.transport.link('dev', {})
  const config = s.fake.current('dev').config
  assert.equal(config.version, [2, 3000, 1])
  assert.equal(config.browser, ['Ubuntu', 'Chrome', '22.04.4'])
  assert.is(config.markOnlineOnConnect, false)
  assert.is(config.syncFullHistory, false)
  assert.is(config.emitOwnEvents, false)
  assert.is(config.connectTimeoutMs, 12_345)
  assert.not.ok('qrTimeout' in config, 'undefined values would override Baileys defaults')
  assert.ok(Object.values(config).every(v => v !== undefined))
  assert.type(config.getMessage, 'function')
  assert.type(config.cachedGroupMetadata, 'function')
  assert.is(config.logger?.level, 'warn')
  assert.is(config.auth.creds.account, undefined)
  for (const jid of ['status@broadcast', '12345@broadcast', '1203630000@newsletter'])
    assert.is(config.shouldIgnoreJid!(jid), true, `${jid} is ignored inside Baileys`)
  for (const jid of ['5511888880000@s.whatsapp.net', '998877@lid', '120363000000000001@g.us']) assert.not.ok(config.shouldIgnoreJid!(jid), `${jid} is not`)
  await s.transport.stop()
})

link('without a resolved version the config leaves version out (Baileys uses its bundled one)', async () => {
  const s = await setupBaileys({ resolveVersion: async () => undefined })
  await s.transport.link('dev', {})
  assert.not.ok('version' in s.fake.current('dev').config)
  await s.transport.stop()
})

link('the version is resolved once for all devices and sockets', async () => {
  let calls = 0
  const s = await setupBaileys({ resolveVersion: async () => (calls++, [2, 3000, 7]) })
  await s.transport.link('a', {})
  await s.transport.link('b', {})
  await s.fake.completeLink('a', '5511999990000')
  assert.is(calls, 1)
  assert.equal(s.fake.current('a').config.version, [2, 3000, 7])
  await s.transport.stop()
})

link('link() on a linked device that is not running tries its credentials first: already-connected when they open', async () => {
  const storage = await storedDevice()
  const s = await setupBaileys({ storage })
  await transportRejection(s.transport.link('dev', {}), 'already-connected')
  assert.is(s.fake.sockets.length, 1)
  assert.ok(s.fake.current('dev').config.auth.creds.account, 'resumed with the stored credentials')
  assert.is(s.statuses('dev').at(-1)?.state, 'open')
  await s.transport.stop()
})

link('link() starts fresh when the stored credentials are refused (401)', async () => {
  const storage = await storedDevice()
  const s = await setupBaileys({ storage, behaviour: { autoOpen: false } })
  const pending = s.transport.link('dev', {})
  await waitFor(() => s.fake.sockets.length === 1, 'the resume socket')
  await s.fake.current('dev').close(401)
  const challenge = await pending
  assert.is(challenge.kind, 'qr')
  assert.is(s.fake.sockets.length, 2)
  assert.is(s.fake.current('dev').config.auth.creds.account, undefined)
  await s.transport.stop()
})

link('link() after the session was replaced starts a fresh link instead of fighting the other client', async () => {
  const s = await setupBaileys()
  await s.linked('dev', '5511999990000')
  await s.fake.current('dev').close(440)
  await waitFor(() => s.statuses('dev').at(-1)?.state === 'replaced', 'replaced')
  const count = s.fake.sockets.length
  const challenge = await s.transport.link('dev', {})
  assert.is(challenge.kind, 'qr')
  assert.is(s.fake.sockets.length, count + 1)
  assert.is(s.fake.current('dev').config.auth.creds.account, undefined)
  await s.transport.stop()
})

link.run()
