import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { linkedBaileys } from '../helpers/baileys-setup.ts'
import { BOB_JID, waMessage } from '../helpers/baileys-fixtures.ts'

const CAROL_JID = '5511777770000@s.whatsapp.net'

// Baileys answers a retry receipt (a contact's phone could not decrypt one of OUR messages) by
// getMessage({ remoteJid: <asker>, fromMe: true, id, participant }) and relays what it returns to
// the asker under that id (messages-recv.js sendMessagesAgain). Ids are chosen by senders: Carol's
// photo has id X; Bob asks for a resend of "our" message X (there is no own send X, none kept).
test("a retry request for an id the device never sent is not answered with another chat's received content", async () => {
  const s = await linkedBaileys({ downloadMedia: async () => Buffer.from('carol-photo') })
  try {
    await s.fake.deliver(
      'dev',
      waMessage({ chat: CAROL_JID, id: 'SHAREDID01', message: { imageMessage: { mimetype: 'image/jpeg', caption: "Carol's private photo", fileLength: 11 } } }),
    )
    assert.is(s.messages('dev').length, 1)
    const getMessage = s.fake.current('dev').config.getMessage!
    const answered = await getMessage({ remoteJid: BOB_JID, fromMe: true, id: 'SHAREDID01', participant: BOB_JID })
    assert.is(answered?.imageMessage?.caption, undefined, "Carol's photo would be re-encrypted and relayed to Bob")
    assert.is(answered, undefined)
  } finally {
    await s.transport.stop()
  }
})

test('a retry request still finds the own send it names (a group send: the retry comes from a participant)', async () => {
  const s = await linkedBaileys()
  try {
    const sent = await s.transport.send('dev', '5511888880000', { kind: 'text', text: 'hello Bob' })
    const getMessage = s.fake.current('dev').config.getMessage!
    const answered = await getMessage({ remoteJid: BOB_JID, fromMe: true, id: sent.id, participant: BOB_JID })
    assert.ok(answered, 'the own send is found')
  } finally {
    await s.transport.stop()
  }
})

test.run()
