import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { baileysTransport } from '../../adapters/transport-baileys/index.ts'
import type { BaileysTransportOptions } from '../../adapters/transport-baileys/options.ts'
import { silentLogger } from '../../src/logger.ts'
import { linkedBaileys } from '../helpers/baileys-setup.ts'
import { BOB_JID, waMessage } from '../helpers/baileys-fixtures.ts'
import { settle, waitFor } from '../helpers/fake-baileys/index.ts'

/**
 * A message is taken as seen (in memory, and in the message store across restarts) only once the
 * gateway recorded it: one whose emit failed, or whose process died before its emit returned, is
 * reported when the network delivers it again; a true duplicate is still reported once.
 */
const redelivery = suite('Baileys transport: a message the gateway did not record is reported when it comes again')

/** Device 'dev', linked, then opened again by a transport (with `options`) that reports messages through `onMessage`. */
async function reportingTo(onMessage: (id: string) => void, options: Partial<BaileysTransportOptions> = {}) {
  const s = await linkedBaileys()
  await s.transport.stop()
  let open = false
  const transport = baileysTransport({ ...s.fake.transportOptions(), ...options })
  await transport.start({
    storage: s.storage,
    logger: silentLogger,
    emit: async event => {
      if (event.type === 'status') open = event.status.state === 'open'
      if (event.type === 'message') onMessage(event.message.id)
    },
  })
  await transport.connect('dev')
  await waitFor(() => open, 'dev open again')
  return { fake: s.fake, transport }
}

redelivery('an emit that fails, then the same message delivered again: it reaches the gateway, once', async () => {
  let emits = 0
  const recorded: string[] = []
  const s = await reportingTo(id => {
    if (++emits === 1) throw new Error('the gateway could not record it')
    recorded.push(id)
  })
  const message = waMessage({ chat: BOB_JID, id: 'AGAIN', message: { conversation: 'hi' } })
  await s.fake.deliver('dev', message)
  await waitFor(() => emits === 1, 'the first emit')
  await settle()
  await s.fake.deliver('dev', message)
  await waitFor(() => recorded.length > 0, 'the message delivered again to be reported')
  await s.fake.deliver('dev', message, 'append')
  await settle()
  assert.equal(recorded, ['AGAIN'], 'delivered again: reported; a duplicate after that is not')
  await s.transport.stop()
})

redelivery('a media message delivered again while the first waits for its download is reported once', async () => {
  let release!: () => void
  const downloading = new Promise<void>(resolve => (release = resolve))
  const recorded: string[] = []
  const bytes: BaileysTransportOptions['downloadMedia'] = async () => (await downloading, Buffer.from('png'))
  const s = await reportingTo(id => void recorded.push(id), { downloadMedia: bytes })
  const image = waMessage({ chat: BOB_JID, id: 'IMG', message: { imageMessage: { mimetype: 'image/png', fileLength: 3 } } })
  await s.fake.deliver('dev', image)
  await s.fake.deliver('dev', image)
  await settle()
  release()
  await waitFor(() => recorded.length > 0, 'the image to be reported')
  await settle()
  assert.equal(recorded, ['IMG'])
  await s.transport.stop()
})

redelivery.run()
