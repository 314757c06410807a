import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { linkedBaileys } from '../helpers/baileys-setup.ts'
import { BOB, BOB_JID, BOB_LID, ME, waMessage } from '../helpers/baileys-fixtures.ts'
import { transportRejection } from '../helpers/transport-errors.ts'

/**
 * A 1:1 message from a LID whose key carries no phone (`remoteJidAlt`): the webhook names the chat by
 * the phone the socket's LID mappings know. That `chat` is what operations 12 and 14 take as `to`
 * (docs/api.md: `chat` is "where a reply goes"; markRead's `to` is the sender): the reaction and the
 * read receipt must find the message.
 */
const lidChat = suite('Baileys transport: a message from a LID reported under its phone can be read and reacted to by that phone')

lidChat('markRead and a reaction naming the chat the webhook gave (the phone from the LID mappings) reach the message', async () => {
  const s = await linkedBaileys()
  s.fake.lidMappings.set(BOB_LID, `${BOB}:0@s.whatsapp.net`)
  const received = waMessage({ chat: BOB_LID, message: { conversation: 'oi' } })
  await s.fake.deliver('dev', received)
  const [reported] = s.messages('dev')
  assert.equal([reported.chat, reported.from], [BOB, BOB])
  await s.transport.markRead('dev', { chat: reported.chat, id: reported.id })
  const reads = s.fake.current('dev').calls.filter(c => c.method === 'readMessages')
  assert.equal(
    reads.map(c => c.args[0]),
    [[{ remoteJid: BOB_LID, fromMe: false, id: reported.id }]],
  )
  await s.transport.send('dev', reported.chat, { kind: 'reaction', target: { chat: reported.chat, id: reported.id }, emoji: '👍' })
  const reaction = s.fake.sent('dev').at(-1)!
  assert.is(reaction.jid, BOB_LID, 'the reaction goes to the chat of its target, as received')
  await s.transport.stop()
})

lidChat('the phone of a LID chat is remembered only for that LID: another phone still names another chat', async () => {
  const s = await linkedBaileys()
  s.fake.lidMappings.set(BOB_LID, BOB_JID)
  const received = waMessage({ chat: BOB_LID, message: { conversation: 'oi' } })
  await s.fake.deliver('dev', received)
  await transportRejection(s.transport.markRead('dev', { chat: '5511977770003', id: received.key.id! }), 'not-found')
  await s.transport.stop()
})

lidChat('a message the account sent from its phone to a LID chat (its key carrying our own phone as alt) is deleted by the chat the webhook gave', async () => {
  const s = await linkedBaileys()
  s.fake.lidMappings.set(BOB_LID, BOB_JID)
  // Baileys 7 takes `sender_pn` as remoteJidAlt: on a message of our own that is our own phone, not the contact's.
  await s.fake.deliver('dev', waMessage({ chat: BOB_LID, fromMe: true, remoteJidAlt: `${ME}@s.whatsapp.net`, message: { conversation: 'do celular' } }))
  const [reported] = s.messages('dev')
  assert.equal([reported.fromMe, reported.chat], [true, BOB])
  await s.transport.send('dev', reported.chat, { kind: 'delete', target: { chat: reported.chat, id: reported.id, fromMe: true } })
  const deletion = s.fake.sent('dev').at(-1)!
  assert.is(deletion.jid, BOB_LID, 'the deletion goes to the chat of its target, as received')
  await transportRejection(s.transport.send('dev', ME, { kind: 'delete', target: { chat: ME, id: reported.id, fromMe: true } }), 'not-found')
  await s.transport.stop()
})

lidChat.run()
