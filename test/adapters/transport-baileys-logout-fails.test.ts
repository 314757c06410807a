import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { Boom } from '@hapi/boom'
import { TransportError } from '../../src/ports/transport.ts'
import { RecordingStorage } from '../helpers/recording-storage.ts'
import { setupBaileys } from '../helpers/baileys-setup.ts'
import { waitFor } from '../helpers/fake-baileys/index.ts'

/**
 * A logout (operation 6) of an open device whose unlink on WhatsApp's side fails (Baileys' logout()
 * rejects: the frame could not be sent): WhatsApp did not hear of it, so the phone still lists the
 * device. docs/decisions.md: such a deletion answers 500 and keeps the device whole, still linked.
 * Before, the adapter ended the socket and deleted the credentials anyway, and the logout resolved:
 * the gateway deleted the device while the phone kept listing a device whose keys were gone.
 */
const test = suite('Baileys transport: a logout whose unlink fails')

test('a failed unlink of an open device fails the logout and keeps the device linked', async () => {
  const storage = new RecordingStorage()
  const s = await setupBaileys({ storage })
  await s.linked('dev', '5511999990000')
  const keys = storage.keys('device:dev:auth:').length
  s.fake.failNext('logout', new Boom('Connection Closed', { statusCode: 428 }))
  const failure = await s.transport.logout('dev').then(
    () => undefined,
    (error: unknown) => error,
  )
  assert.ok(failure instanceof TransportError, 'the logout failed (the gateway answers 500 and keeps the device)')
  assert.equal(storage.keys('device:dev:auth:creds'), ['device:dev:auth:creds'], 'the credentials stay (the phone still lists the device)')
  assert.is(storage.keys('device:dev:auth:').length, keys, 'the keys stay')
  assert.not.ok(
    s.statuses('dev').some(status => status.reason === 'logged out'),
    'never reported logged out',
  )
  await waitFor(() => s.statuses('dev').at(-1)?.state === 'open', 'the device open again', 10_000)
  assert.is(s.statuses('dev').at(-1)?.phone, '5511999990000')

  await s.transport.logout('dev') // a retry unlinks it
  assert.ok(s.fake.current('dev').calls.some(c => c.method === 'logout'))
  assert.equal(storage.keys('device:dev:'), [])
  await s.transport.stop()
})

test.run()
