import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as baileys from '@whiskeysockets/baileys'
import type { Storage } from '../../src/ports/storage.ts'
import { deleteByPrefix, loadAuthState, storedPhone } from '../../adapters/transport-baileys/auth-state.ts'
import { RecordingStorage } from '../helpers/recording-storage.ts'
import { sqliteStorage } from '../helpers/sqlite-storage.ts'
import { setupBaileys, storedDevice } from '../helpers/baileys-setup.ts'
import { settle, waitFor } from '../helpers/fake-baileys/index.ts'

const stores: [string, () => Storage & { close?(): Promise<void> }][] = [
  ['memory', () => new RecordingStorage()],
  ['sqlite', () => sqliteStorage()],
]

for (const [name, makeStore] of stores) {
  const roundTrip = suite(`auth state over ${name} storage`)

  roundTrip('creds round-trip with Buffers intact', async () => {
    const storage = makeStore()
    const first = await loadAuthState(storage, 'device:a:auth:', baileys)
    first.state.creds.me = { id: '5511999990000:3@s.whatsapp.net', name: 'Ana' }
    await first.saveCreds()
    const again = await loadAuthState(storage, 'device:a:auth:', baileys)
    const creds = again.state.creds
    assert.ok(Buffer.isBuffer(creds.noiseKey.public))
    assert.ok(Buffer.isBuffer(creds.signedIdentityKey.private))
    assert.ok(Buffer.isBuffer(creds.signedPreKey.signature))
    assert.equal(Buffer.compare(Buffer.from(creds.noiseKey.public), Buffer.from(first.state.creds.noiseKey.public)), 0)
    assert.is(creds.registrationId, first.state.creds.registrationId)
    assert.is(creds.advSecretKey, first.state.creds.advSecretKey)
    assert.equal(creds.me, { id: '5511999990000:3@s.whatsapp.net', name: 'Ana' })
    await storage.close?.()
  })

  roundTrip('every signal key type round-trips through makeCacheableSignalKeyStore', async () => {
    const storage = makeStore()
    const auth = await loadAuthState(storage, 'device:a:auth:', baileys)
    const keys = baileys.makeCacheableSignalKeyStore(auth.state.keys)
    const pair = baileys.Curve.generateKeyPair()
    await keys.set({
      'pre-key': { '1': pair, '2': baileys.Curve.generateKeyPair() },
      session: { '5511999990000.0': Buffer.from('session-bytes') },
      'sender-key': { '120363@g.us::5511:0': Buffer.from('sender-key') },
      'sender-key-memory': { '120363@g.us': { '5511@s.whatsapp.net': true } },
      'app-state-sync-key': { AAAA: { keyData: Buffer.from('key-data'), timestamp: 5 } },
      'app-state-sync-version': { regular: { version: 3, hash: Buffer.alloc(128, 7), indexValueMap: {} } },
      'lid-mapping': { '5511999990000': '123456789' },
      'device-list': { '5511999990000': ['0', '12'] },
      tctoken: { '123@lid': { token: Buffer.from('tc'), timestamp: '1700000000' } },
      'identity-key': { '123@lid.0': Buffer.alloc(33, 5) },
    })
    const fresh = await loadAuthState(storage, 'device:a:auth:', baileys)
    const got = async <T extends keyof baileys.SignalDataTypeMap>(type: T, id: string) => (await fresh.state.keys.get(type, [id]))[id]
    const preKey = await got('pre-key', '1')
    assert.ok(Buffer.isBuffer(preKey.public) && Buffer.isBuffer(preKey.private))
    assert.equal(Buffer.from(preKey.private), Buffer.from(pair.private))
    assert.equal(Buffer.from(await got('session', '5511999990000.0')).toString(), 'session-bytes')
    assert.equal(Buffer.from(await got('sender-key', '120363@g.us::5511:0')).toString(), 'sender-key')
    assert.equal(await got('sender-key-memory', '120363@g.us'), { '5511@s.whatsapp.net': true })
    const syncKey = await got('app-state-sync-key', 'AAAA')
    assert.instance(syncKey, baileys.proto.Message.AppStateSyncKeyData)
    assert.equal(Buffer.from(syncKey.keyData!).toString(), 'key-data')
    const version = await got('app-state-sync-version', 'regular')
    assert.ok(Buffer.isBuffer(version.hash))
    assert.is(await got('lid-mapping', '5511999990000'), '123456789')
    assert.equal(await got('device-list', '5511999990000'), ['0', '12'])
    assert.ok(Buffer.isBuffer((await got('tctoken', '123@lid')).token))
    assert.ok(Buffer.isBuffer(await got('identity-key', '123@lid.0')))
    await storage.close?.()
  })

  roundTrip("set({'pre-key': {'1': null}}) deletes the key", async () => {
    const storage = makeStore()
    const auth = await loadAuthState(storage, 'p:', baileys)
    await auth.state.keys.set({ 'pre-key': { '1': baileys.Curve.generateKeyPair(), '2': baileys.Curve.generateKeyPair() } })
    await auth.state.keys.set({ 'pre-key': { '1': null } })
    assert.equal(Object.keys(await auth.state.keys.get('pre-key', ['1', '2'])), ['2'])
    const keys: string[] = []
    for await (const [key] of storage.list('p:key:pre-key:')) keys.push(key)
    assert.equal(keys, ['p:key:pre-key:2'])
    await storage.close?.()
  })

  roundTrip('clear() removes the creds and every key, and later writes are dropped', async () => {
    const storage = makeStore()
    const auth = await loadAuthState(storage, 'device:a:auth:', baileys)
    await auth.saveCreds()
    await auth.state.keys.set({ session: { x: Buffer.from('s') } })
    await storage.set('device:b:auth:creds', 'other device')
    await auth.clear()
    await auth.saveCreds()
    await auth.state.keys.set({ session: { y: Buffer.from('s') } })
    const left: string[] = []
    for await (const [key] of storage.list('device:')) left.push(key)
    assert.equal(left, ['device:b:auth:creds'])
    await storage.close?.()
  })

  roundTrip.run()
}

const transport = suite('auth state through the transport')

transport('a restart with stored creds reconnects with no QR', async () => {
  const storage = await storedDevice('123456789@lid')

  const second = await setupBaileys({ storage })
  assert.equal(await second.transport.status('dev'), { state: 'closed', connected: false, phone: '5511999990000' })
  await second.transport.connect('dev')
  await waitFor(() => second.statuses('dev').at(-1)?.state === 'open', 'open after restart')
  const socket = second.fake.current('dev')
  assert.is(second.fake.sockets.length, 1)
  assert.equal(socket.qrs, [])
  assert.equal(second.qrs('dev'), [])
  assert.ok(socket.config.auth.creds.account, 'the stored account is handed to the socket')
  assert.equal(
    second.statuses('dev').map(s => s.state),
    ['connecting', 'open'],
  )
  assert.equal(second.statuses('dev').at(-1), { state: 'open', connected: true, phone: '5511999990000', lid: '123456789@lid' })
  await second.transport.stop()
})

transport('connect() without stored creds opens nothing', async () => {
  const s = await setupBaileys()
  await s.transport.connect('never-linked')
  await settle()
  assert.is(s.fake.sockets.length, 0)
  assert.equal(s.events, [])
  assert.equal(await s.transport.status('never-linked'), { state: 'closed', connected: false })
  await s.transport.stop()
})

transport('connect() does not resume the leftovers of an unfinished pairing-code link', async () => {
  const storage = new RecordingStorage()
  const auth = await loadAuthState(storage, 'device:dev:auth:', baileys)
  auth.state.creds.me = { id: '5511999990000@s.whatsapp.net', name: '~' }
  await auth.saveCreds()
  const s = await setupBaileys({ storage })
  await s.transport.connect('dev')
  await settle()
  assert.is(s.fake.sockets.length, 0)
  assert.is(await storedPhone(storage, 'device:dev:auth:'), undefined)
  await s.transport.stop()
})

transport('a new link resets creds that have `me` but no `account`', async () => {
  const storage = new RecordingStorage()
  const auth = await loadAuthState(storage, 'device:dev:auth:', baileys)
  auth.state.creds.me = { id: '5511999990000@s.whatsapp.net', name: '~' }
  const oldNoise = Buffer.from(auth.state.creds.noiseKey.public)
  await auth.saveCreds()
  await auth.state.keys.set({ 'pre-key': { '1': baileys.Curve.generateKeyPair() } })
  const s = await setupBaileys({ storage })
  await s.transport.link('dev', {})
  const creds = s.fake.current('dev').config.auth.creds
  assert.is(creds.me, undefined)
  assert.not.equal(Buffer.from(creds.noiseKey.public), oldNoise)
  assert.equal(storage.keys('device:dev:auth:key:'), [])
  await s.transport.stop()
})

transport('creds.update persists the whole creds (the pairing result included)', async () => {
  const storage = new RecordingStorage()
  const s = await setupBaileys({ storage })
  await s.linked('dev', '5511999990000')
  const reloaded = await loadAuthState(storage, 'device:dev:auth:', baileys)
  assert.ok(reloaded.state.creds.account)
  assert.is(reloaded.state.creds.me?.id, '5511999990000:7@s.whatsapp.net')
  assert.ok(Buffer.isBuffer(reloaded.state.creds.noiseKey.public))
  await s.transport.stop()
})

transport('keys written by the socket land in the device namespace', async () => {
  const storage = new RecordingStorage()
  const s = await setupBaileys({ storage })
  await s.linked('dev', '5511999990000')
  await s.fake.current('dev').storeKeys({ session: { '5511888880000.0': Buffer.from('x') } })
  assert.equal(storage.keys('device:dev:auth:key:'), ['device:dev:auth:key:session:5511888880000.0'])
  await s.transport.stop()
})

transport('a new link is not served keys cached for the previous account (the signal key cache goes with the credentials)', async () => {
  const storage = new RecordingStorage()
  const s = await setupBaileys({ storage })
  await s.linked('dev', '5511999990000')
  for (const [end, relink] of [
    ['440: replaced by another client, then a new link', 440],
    ['401: logged out from the phone, then a new link', 401],
  ] as const) {
    const old = s.fake.current('dev')
    await old.storeKeys({ session: { '5511888880000.0': Buffer.from('old-account-session') } })
    assert.ok((await old.config.auth.keys.get('session', ['5511888880000.0']))['5511888880000.0'], `${end}: cached`)
    await old.close(relink)
    await waitFor(() => ['replaced', 'logged-out'].includes(s.statuses('dev').at(-1)?.state ?? ''), `${end}: ended`)
    await s.transport.link('dev', {})
    assert.equal(storage.keys('device:dev:auth:key:'), [], `${end}: the stored keys are gone`)
    assert.equal(await s.fake.current('dev').config.auth.keys.get('session', ['5511888880000.0']), {}, `${end}: and so is the cached copy`)
    await s.fake.completeLink('dev', '5511999990000')
    await waitFor(() => s.statuses('dev').at(-1)?.state === 'open', `${end}: open again`)
  }
  await s.transport.stop()
})

/** A linked device on a store taking 80 ms a write, a creds update and a key write on their way: once `end` resolves, both are in the store. */
async function writesLandBefore(end: 'stop' | 'disconnect', keyId: string) {
  const storage = new RecordingStorage()
  const s = await setupBaileys({ storage })
  await s.linked('dev', '5511999990000')
  const set = storage.set.bind(storage)
  storage.set = async (key, value, ttl) => {
    await new Promise(resolve => setTimeout(resolve, 80))
    return set(key, value, ttl)
  }
  const socket = s.fake.current('dev')
  Object.assign(socket.creds, { routingInfo: Buffer.from(`edge-${keyId}`) })
  socket.ev.emit('creds.update', { routingInfo: socket.creds.routingInfo })
  void socket.storeKeys({ 'pre-key': { [keyId]: { public: Buffer.alloc(32, 1), private: Buffer.alloc(32, 2) } } })
  await (end === 'stop' ? s.transport.stop() : s.transport.disconnect('dev'))
  const creds = JSON.parse(String(await storage.get('device:dev:auth:creds')), baileys.BufferJSON.reviver)
  assert.equal(Buffer.from(creds.routingInfo ?? []).toString(), `edge-${keyId}`, `the last creds.update reached the store before ${end}() resolved`)
  assert.ok(await storage.get(`device:dev:auth:key:pre-key:${keyId}`), 'so did the key write')
  await s.transport.stop()
}

transport('stop() waits for credential and key writes still on their way to the store', () => writesLandBefore('stop', '42'))

// A lease handover disconnects the device here, then another instance loads its auth state: a creds write still in flight was lost to it, and landed later over the new holder's creds.
transport('disconnect() waits for credential and key writes still on their way to the store (another instance resumes the device from them)', () =>
  writesLandBefore('disconnect', '43'),
)

transport('logout unlinks through the socket and clears the device namespace', async () => {
  const storage = new RecordingStorage()
  const s = await setupBaileys({ storage })
  await s.linked('dev', '5511999990000')
  await s.linked('other', '5511777770000')
  await s.transport.send('dev', '5511888880000', { kind: 'text', text: 'hi' })
  assert.ok(storage.keys('device:dev:').length > 1)
  const socket = s.fake.current('dev')
  const sockets = s.fake.socketsOf('dev').length
  await s.transport.logout('dev')
  assert.ok(socket.calls.some(c => c.method === 'logout'))
  assert.equal(storage.keys('device:dev:'), [])
  assert.ok(storage.keys('device:other:').length > 0, 'other devices keep their state')
  assert.equal(s.statuses('dev').at(-1), { state: 'closed', connected: false, reason: 'logged out' })
  await settle()
  assert.is(s.fake.socketsOf('dev').length, sockets, 'no reconnect after the logout')
  assert.equal(await s.transport.status('dev'), { state: 'closed', connected: false })
  await s.transport.stop()
})

// It is opened first, to unlink it on WhatsApp's side: test/adapters/transport-baileys-logout-unopened.
transport('logout of a device that is stored but not running deletes its state', async () => {
  const storage = await storedDevice()
  const second = await setupBaileys({ storage })
  await second.transport.logout('dev')
  assert.equal(storage.keys('device:dev:'), [])
  assert.equal(second.statuses('dev').at(-1), { state: 'closed', connected: false, reason: 'logged out' })
  assert.equal(await second.transport.status('dev'), { state: 'closed', connected: false })
  await second.transport.stop()
})

transport('deleteByPrefix removes only matching keys', async () => {
  const storage = new RecordingStorage()
  await storage.set('device:a:x', 1)
  await storage.set('device:a:y', 2)
  await storage.set('device:ab:z', 3)
  assert.is(await deleteByPrefix(storage, 'device:a:'), 2)
  assert.equal(storage.keys(), ['device:ab:z'])
})

transport.run()
