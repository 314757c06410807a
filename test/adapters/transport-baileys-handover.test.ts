import { test } from 'uvu'
import * as assert from 'uvu/assert'
import * as baileys from '@whiskeysockets/baileys'
import { setupBaileys } from '../helpers/baileys-setup.ts'
import { settle, waitFor } from '../helpers/fake-baileys/index.ts'
import { ME } from '../helpers/baileys-fixtures.ts'
import { RecordingStorage } from '../helpers/recording-storage.ts'

const lastState = (statuses: { state: string }[]) => statuses.at(-1)?.state

test('a device back on an instance after another instance ran it: the new socket gets the stored creds (a signed pre-key rotated meanwhile), and the stale ones are never written back', async () => {
  const storage = new RecordingStorage()
  const first = await setupBaileys({ storage })
  const second = await setupBaileys({ storage })
  try {
    await first.linked('dev', ME)
    await first.transport.disconnect('dev')

    // The other instance runs the device and rotates its signed pre-key (WhatsApp now hands out the new one).
    await second.transport.connect('dev')
    await waitFor(() => second.fake.latest('dev')?.opened === true, 'open on the second instance')
    const socket = second.fake.current('dev')
    const rotated = await baileys.signedKeyPair(socket.creds.signedIdentityKey, socket.creds.signedPreKey.keyId + 1)
    Object.assign(socket.creds, { signedPreKey: rotated })
    socket.ev.emit('creds.update', { signedPreKey: rotated })
    await settle()
    await second.transport.disconnect('dev')

    // Back on the first instance.
    await first.transport.connect('dev')
    await waitFor(() => lastState(first.statuses('dev')) === 'open', 'open again on the first instance')
    const back = first.fake.current('dev')
    assert.is(back.creds.signedPreKey.keyId, rotated.keyId, 'the socket logs in with the signed pre-key WhatsApp has')
    back.ev.emit('creds.update', {})
    await settle()
    const stored = JSON.parse(String(await storage.get('device:dev:auth:creds')), baileys.BufferJSON.reviver)
    assert.is(stored.signedPreKey.keyId, rotated.keyId, 'the store keeps the rotated signed pre-key')
  } finally {
    await first.transport.stop()
    await second.transport.stop()
  }
})

test.run()
