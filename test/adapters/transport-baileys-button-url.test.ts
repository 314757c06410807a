import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { baileysTransport } from '../../adapters/transport-baileys/index.ts'
import { FakeBaileys } from '../helpers/fake-baileys/index.ts'
import { connectedBaileysDevice } from '../helpers/baileys-gateway.ts'
import { startGateway } from '../helpers/gateway.ts'

const urls = suite('Baileys transport behind the HTTP API: a urlButton the network would refuse is refused as invalid input')

const BOB = '5511888880000'

/** Each of `refused` as a urlButton action answers 401 validation.required and sends nothing; `accepted` is sent (200). */
function refusesActions(name: string, refused: string[], accepted: string, acceptedWhy: string) {
  urls(name, async () => {
    const fake = new FakeBaileys({})
    const transport = baileysTransport({ ...fake.transportOptions(), reconnect: { initialDelayMs: 5, maxDelayMs: 40, jitter: 0 } })
    const t = await startGateway({ transport })
    const buttonsTo = (authkey: string, action: string) =>
      t.post('/api/create-message', { appkey: 'loja', authkey, to: BOB, message: 'Veja:', buttons: [{ type: 'urlButton', displaytext: 'Site', action }] })
    try {
      const { authkey } = await t.register()
      const device = await connectedBaileysDevice(t, fake, authkey)
      for (const action of refused)
        assert.equal((await buttonsTo(authkey, action)).body, { status: 401, message: 'validation.required' }, JSON.stringify(action))
      assert.equal(fake.sent(device.id), [])
      assert.is((await buttonsTo(authkey, accepted)).body.status, 200, acceptedWhy)
    } finally {
      await t.stop()
    }
  })
}

// new URL() accepts each of these (it encodes the space and drops tabs and newlines): the adapter then refused the button (400) after the gateway had accepted it.
refusesActions(
  'a urlButton action with a space, tab or newline inside answers 401 validation.required, and nothing is sent',
  ['https://example.com/minha loja', 'https://exam\tple.com/', 'https://example.com/\nloja'],
  '  https://example.com/loja  ',
  'spaces around the URL are trimmed, as before',
)

// new URL() reads each as https://example.com/ (a special scheme's slashes are optional to it, a backslash is a slash), but the button carries the text as written: the adapter refused it (400).
refusesActions(
  'a urlButton action without the // after its scheme (https:example.com) answers 401 validation.required, and nothing is sent',
  ['https:example.com', 'https:/example.com/loja', 'http:\\\\example.com'],
  'HTTPS://example.com/loja',
  'the scheme in any case, as before',
)

urls.run()
