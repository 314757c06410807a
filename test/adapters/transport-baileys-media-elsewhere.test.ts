import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { RecordingStorage } from '../helpers/recording-storage.ts'
import { setupBaileys } from '../helpers/baileys-setup.ts'
import { BOB_JID, waMessage } from '../helpers/baileys-fixtures.ts'
import { waitFor } from '../helpers/fake-baileys/index.ts'

/**
 * GET /media/:token may be served by an instance that does not run the device (in a cluster the media
 * route relays to the holder, but serves it here when the lease names no live holder, or the holder
 * relayed it back). Reading the remembered message from the store opens no session here: no session
 * object, auth state or proxy agent is kept for a device another process runs, and what this process
 * says of the device stays what the store says.
 */
const test = suite('Baileys transport: media of a device this process does not run')

test('a download for a device run elsewhere keeps no session here: its status follows the store', async () => {
  const storage = new RecordingStorage()
  const holder = await setupBaileys({ storage, inlineMediaMaxBytes: 10 })
  await holder.linked('dev', '5511999990000')
  const big = waMessage({ chat: BOB_JID, id: 'BIG', message: { documentMessage: { mimetype: 'application/pdf', fileName: 'big.pdf', fileLength: 5_000 } } })
  await holder.fake.deliver('dev', big)
  await waitFor(() => holder.messages('dev').length === 1, 'the media message')

  const other = await setupBaileys({ storage })
  other.fake.media.set('BIG', Buffer.alloc(5_000, 1))
  const media = await other.transport.downloadMedia('dev', { chat: BOB_JID, id: 'BIG', fromMe: false })
  assert.equal(media, { data: Buffer.alloc(5_000, 1), mimetype: 'application/pdf', fileName: 'big.pdf' })
  assert.is(other.transport.statusNow('dev'), undefined, 'no session of the device in this process')

  await holder.transport.logout('dev') // the holder deletes the device
  assert.equal(await other.transport.status('dev'), { state: 'closed', connected: false }, 'no phone of a deleted device')
  await holder.transport.stop()
  await other.transport.stop()
})

test.run()
