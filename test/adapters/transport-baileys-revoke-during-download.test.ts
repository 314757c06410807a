import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { linkedBaileys } from '../helpers/baileys-setup.ts'
import { BOB, BOB_JID, ME, waMessage } from '../helpers/baileys-fixtures.ts'
import { waitFor } from '../helpers/fake-baileys/index.ts'
import { transportRejection } from '../helpers/transport-errors.ts'

/**
 * Media whose bytes are inlined is reported once its download ends, on the device's download queue; its sender may
 * delete it for everyone meanwhile (a few seconds for a large file). The revoke names a message the gateway has not
 * reported yet: it is reported after it, and the message it deletes is forgotten, not remembered after its deletion.
 */
const revokeDuringDownload = suite('Baileys transport: media deleted for everyone while its download is under way')

revokeDuringDownload('the Deletada comes after the media it deletes, and the media is no target any more', async () => {
  let release!: () => void
  const downloaded = new Promise<void>(resolve => (release = resolve))
  const s = await linkedBaileys({ downloadMedia: async () => (await downloaded, Buffer.from('foto')) })
  const image = waMessage({ chat: BOB_JID, message: { imageMessage: { mimetype: 'image/jpeg', fileLength: 4 } } })
  await s.fake.deliver('dev', image)
  const revoke = { protocolMessage: { type: 0, key: { remoteJid: `${ME}@s.whatsapp.net`, fromMe: true, id: image.key.id } } }
  await s.fake.deliver('dev', waMessage({ chat: BOB_JID, message: revoke }))
  release()
  await waitFor(() => s.messages('dev').length === 2, 'both messages reported')
  assert.equal(
    s.messages('dev').map(m => m.content.kind),
    ['image', 'delete'],
    'a webhook receiver hears of the media before its deletion',
  )
  await transportRejection(s.transport.markRead('dev', { chat: BOB, id: image.key.id! }), 'not-found')
  await s.transport.stop()
})

revokeDuringDownload.run()
