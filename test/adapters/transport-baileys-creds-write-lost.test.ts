import { test } from 'uvu'
import * as assert from 'uvu/assert'
import * as baileys from '@whiskeysockets/baileys'
import { setupBaileys } from '../helpers/baileys-setup.ts'
import { settle } from '../helpers/fake-baileys/index.ts'
import { ME } from '../helpers/baileys-fixtures.ts'
import { RecordingStorage } from '../helpers/recording-storage.ts'
import { switchable } from '../helpers/switchable-storage.ts'

// Baileys uploads pre-keys 1..30 and then moves creds.nextPreKeyId on (creds.update). When that one
// creds write meets a store blip, the adapter logs it and forgets it: stop() "waits for credential
// writes still on their way", but this one is never retried, so the next process starts from
// nextPreKeyId 1 again and regenerates pre-keys under ids WhatsApp already handed out.
test('a creds.update whose write fails during a store blip reaches the store once the store is back (at the latest at stop)', async () => {
  const inner = new RecordingStorage()
  const store = switchable(inner)
  const s = await setupBaileys({ storage: store.storage })
  await s.linked('dev', ME)
  const socket = s.fake.current('dev')
  store.down = true
  Object.assign(socket.creds, { nextPreKeyId: 31, firstUnuploadedPreKeyId: 31 })
  socket.ev.emit('creds.update', { nextPreKeyId: 31, firstUnuploadedPreKeyId: 31 })
  await settle()
  store.down = false
  await s.transport.stop()
  const stored = JSON.parse(String(await inner.get('device:dev:auth:creds')), baileys.BufferJSON.reviver)
  assert.is(socket.creds.nextPreKeyId, 31, 'the running socket has moved on')
  assert.is(stored.nextPreKeyId, 31, 'the store has the creds the socket ran with')
})

test.run()
