import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { baileysTransport } from '../../adapters/transport-baileys/index.ts'
import type { SentRecord } from '../helpers/fake-baileys/index.ts'
import { FakeBaileys } from '../helpers/fake-baileys/index.ts'
import { connectedBaileysDevice } from '../helpers/baileys-gateway.ts'
import { startGateway } from '../helpers/gateway.ts'
import { MP3, OPUS } from '../helpers/samples.ts'

const voice = suite('operation 9 over the Baileys transport: a voice note that is not OGG/Opus goes out, without ffmpeg, as audio of its own type')

/** The start of an Ogg stream whose first packet is a Vorbis header (Ogg audio, not Opus). */
const VORBIS = (() => {
  const bytes = Buffer.alloc(80)
  bytes.write('OggS', 0)
  bytes.write('\x01vorbis', 28, 'latin1')
  return bytes
})()

voice('MP3 bytes forced as ogg or opus, and an Ogg Vorbis file, reach WhatsApp as the audio they are, not labelled OGG/Opus', async () => {
  const fake = new FakeBaileys()
  const t = await startGateway({ transport: baileysTransport({ ...fake.transportOptions(), ffmpegPath: false }) })
  try {
    const { authkey } = await t.register()
    const device = await connectedBaileysDevice(t, fake, authkey)
    const cases = [
      [
        { file: MP3.toString('base64'), format: 'ogg' },
        { audio: MP3, mimetype: 'audio/mpeg' },
      ],
      [
        { file: MP3.toString('base64'), format: 'opus' },
        { audio: MP3, mimetype: 'audio/mpeg' },
      ],
      [{ file: VORBIS.toString('base64') }, { audio: VORBIS, mimetype: 'audio/ogg' }],
      [
        { file: OPUS.toString('base64'), format: 'ogg' },
        { audio: OPUS, mimetype: 'audio/ogg; codecs=opus', ptt: true },
      ],
    ] as const
    for (const [fields, content] of cases) {
      const answer = await t.post('/api/create-message', { appkey: 'loja', authkey, to: '5511888880000', ...fields })
      assert.is(answer.body.status, 200, JSON.stringify(answer.body))
      const sent = fake.sent(device.id).at(-1) as Extract<SentRecord, { via: 'sendMessage' }>
      assert.equal(sent.content, content, JSON.stringify(fields).slice(0, 60))
    }
  } finally {
    await t.stop()
  }
})

voice.run()
