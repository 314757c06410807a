import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { setupBaileys } from '../helpers/baileys-setup.ts'
import { settle, waitFor } from '../helpers/fake-baileys/index.ts'
import { BOB_JID, ME, waMessage } from '../helpers/baileys-fixtures.ts'
import { RecordingStorage } from '../helpers/recording-storage.ts'
import { pausingStore } from '../helpers/pausing-storage.ts'

// logout() promises "delete the credentials and keys"; clear() drops key writes that *start* after it,
// but one already on its way to the store (a session key written for the last message) lands after the
// namespace was deleted: a private signal key of the unlinked account stays in the store for good.
test('after logout() no signal key of the device is left in the store, even one whose write was on its way', async () => {
  const paused = pausingStore()
  const s = await setupBaileys({ storage: paused.storage })
  try {
    await s.linked('dev', ME)
    const socket = s.fake.current('dev')
    const held = paused.pause('set', 'device:dev:auth:key:session:')
    const write = socket.storeKeys({ session: { '5511988887777.0': Buffer.from('ratchet') } })
    await held.reached
    const release = setTimeout(() => held.release(), 200)
    await s.transport.logout('dev')
    clearTimeout(release)
    held.release()
    await write
    await settle()
    assert.equal(await paused.keys('device:dev:'), [], 'nothing of the device is left')
  } finally {
    await s.transport.stop()
  }
})

test("unlinked from the phone (a 401) and linked again: a late key write of the old socket does not land in the new link's keys", async () => {
  const paused = pausingStore()
  const s = await setupBaileys({ storage: paused.storage })
  try {
    await s.linked('dev', ME)
    const old = s.fake.current('dev')
    await old.close(401) // its keys are wiped (clear), no disconnect
    await waitFor(() => s.statuses('dev').at(-1)?.state === 'logged-out', 'logged-out', 10_000)
    await s.linked('dev', '5511977776666') // a new link: the auth state is reset, its writes allowed again
    await old.storeKeys({ session: { '5511988887777.0': Buffer.from('old account') } }).catch(() => undefined) // Baileys' late commit of the old socket
    await settle()
    assert.equal(await paused.keys('device:dev:auth:key:session:'), [], "no session key of the old account among the new link's keys")
    // Nor in the signal key cache the new link's socket reads first (the old socket's cache wrapper shares it).
    const read = await s.fake.current('dev').config.auth.keys.get('session', ['5511988887777.0'])
    assert.is(read['5511988887777.0'], undefined, "the new link's socket reads no session of the old account")
  } finally {
    await s.transport.stop()
  }
})

// A message received before the unlink whose media was still downloading: reported and remembered after the deletion, its record (message
// key and media key) stayed in the store for messageTtlMs (7 days), and its event came after the device was reported logged out.
test('after logout() no message record of the device is left in the store, even one whose media was still downloading', async () => {
  let release!: () => void
  const gate = new Promise<void>(resolve => (release = resolve))
  const storage = new RecordingStorage()
  const s = await setupBaileys({ storage, downloadMedia: () => gate.then(() => Buffer.from('img')) })
  try {
    await s.linked('dev', ME)
    await s.fake.deliver('dev', waMessage({ chat: BOB_JID, id: 'PHOTO1', message: { imageMessage: { mimetype: 'image/jpeg', fileLength: 3 } } }))
    await s.transport.logout('dev')
    release() // the download ends after the logout
    await waitFor(() => s.messages('dev').some(m => m.id === 'PHOTO1'), 'the message reported')
    await settle()
    assert.equal(storage.keys('device:dev:'), [], 'nothing of the device is left')
    const order = s.events.filter(e => e.type === 'message' || (e.type === 'status' && e.status.reason === 'logged out')).map(e => e.type)
    assert.equal(order, ['message', 'status'], 'reported before the device was reported logged out')
  } finally {
    await s.transport.stop()
  }
})

test.run()
