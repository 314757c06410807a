import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { baileysTransport } from '../../adapters/transport-baileys/index.ts'
import { BOB_JID, waMessage } from '../helpers/baileys-fixtures.ts'
import { FakeBaileys } from '../helpers/fake-baileys/index.ts'
import { connectedBaileysDevice } from '../helpers/baileys-gateway.ts'
import { startGateway } from '../helpers/gateway.ts'
import { startReceiver } from '../helpers/receiver.ts'

/** Several contacts shared in one message (WhatsApp's contactsArrayMessage) reach the webhook, every one of them: before, only the first did. */
test('a Contato event of several shared contacts carries the first as before and all of them in contacts', async () => {
  const fake = new FakeBaileys()
  const t = await startGateway({ transport: baileysTransport(fake.transportOptions()), allowPrivateUrls: true })
  const receiver = await startReceiver()
  try {
    const { authkey } = await t.register()
    const device = await connectedBaileysDevice(t, fake, authkey, { webhook: receiver.url })
    const cards = [
      { displayName: 'Ana', vcard: 'BEGIN:VCARD\nVERSION:3.0\nFN:Ana\nTEL;waid=5511977770000:+55 11 97777-0000\nEND:VCARD' },
      { displayName: 'Bruno', vcard: 'BEGIN:VCARD\nVERSION:3.0\nFN:Bruno\nTEL;waid=5521966660000:+55 21 96666-0000\nEND:VCARD' },
      { displayName: 'Caio', vcard: 'BEGIN:VCARD\nVERSION:3.0\nFN:Caio\nEND:VCARD' },
    ]
    await fake.deliver(device.id, waMessage({ chat: BOB_JID, id: 'CARDS', message: { contactsArrayMessage: { displayName: '3 contatos', contacts: cards } } }))
    await receiver.waitForHooks(1)
    const [event] = receiver.verified(device.webhookSecret)
    assert.is(event.event, 'Contato')
    assert.is(event.idMessagem, 'CARDS')
    assert.is(event.name, 'Ana')
    assert.is(event.phone, '5511977770000')
    assert.equal(event.contacts, [
      { name: 'Ana', phone: '5511977770000', vcard: cards[0]!.vcard },
      { name: 'Bruno', phone: '5521966660000', vcard: cards[1]!.vcard },
      { name: 'Caio', vcard: cards[2]!.vcard },
    ])
  } finally {
    await t.stop()
    await receiver.stop()
  }
})

test.run()
