import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { TransportError } from '../../src/ports/transport.ts'
import { assertLoggedOut, setupBaileys, storedDevice } from '../helpers/baileys-setup.ts'

/**
 * A logout (operation 6) in a process with no session of a linked device (stored credentials, no
 * session opened here: another instance ran it, or this one restarted). The port promises an unlink:
 * the phone must lose the device. So the logout opens the session with the stored credentials and
 * unlinks through it; one that does not open fails and keeps everything (docs/decisions.md). Before,
 * it deleted the stored credentials without unlinking and resolved: the phone kept listing the device.
 */
const test = suite('Baileys transport: a logout with no session in this process')

test('a logout of a linked device with no session here opens it and unlinks it before deleting the state', async () => {
  const storage = await storedDevice()
  const s = await setupBaileys({ storage })
  await s.transport.logout('dev')
  assertLoggedOut(s, storage)
  await s.transport.stop()
})

test('a logout of a linked device whose session does not open fails and keeps the credentials', async () => {
  const storage = await storedDevice()
  const s = await setupBaileys({ storage, openTimeoutMs: 50, behaviour: { autoOpen: false } })
  const failure = await s.transport.logout('dev').then(
    () => undefined,
    (error: unknown) => error,
  )
  assert.ok(failure instanceof TransportError, 'the logout failed: WhatsApp did not hear of it')
  assert.ok(s.fake.socketsOf('dev').every(socket => !socket.calls.some(c => c.method === 'logout')))
  assert.equal(storage.keys('device:dev:auth:creds'), ['device:dev:auth:creds'], 'the credentials stay (the phone still lists the device)')
  assert.not.ok(
    s.statuses('dev').some(status => status.reason === 'logged out'),
    'never reported logged out',
  )
  assert.is(s.transport.statusNow('dev'), undefined, 'no session left running here')
  await s.transport.stop()
})

test('a logout of a device with no paired credentials deletes what is stored without opening a session', async () => {
  const s = await setupBaileys()
  await s.storage.set('device:dev:msg:x', 'left over')
  await s.transport.logout('dev')
  assert.equal(s.fake.socketsOf('dev'), [])
  assert.is(await s.storage.get('device:dev:msg:x'), undefined)
  await s.transport.stop()
})

test.run()
