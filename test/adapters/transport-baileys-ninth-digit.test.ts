import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { linkedBaileys } from '../helpers/baileys-setup.ts'
import { waMessage } from '../helpers/baileys-fixtures.ts'
import { transportRejection } from '../helpers/transport-errors.ts'

/**
 * A Brazilian mobile registered without its ninth digit: the caller writes it with the 9 (as numbers
 * are written today), the send goes to the canonical JID. Reactions, deletes and read receipts name
 * the chat by the same `to` the send took (operations 12 to 14): they must find their target.
 */
const ninth = suite('Baileys transport: targets in a chat named with or without the Brazilian ninth digit')

const WRITTEN = '5511977776666'
const REGISTERED = '551177776666'

ninth('a reaction and a delete naming the chat as the send did (with the 9) reach the message sent to the registered form', async () => {
  const s = await linkedBaileys()
  s.fake.canonical.set(WRITTEN, REGISTERED)
  const sent = await s.transport.send('dev', WRITTEN, { kind: 'text', text: 'pedido saiu' })
  assert.is(s.fake.sent('dev').at(-1)?.jid, `${REGISTERED}@s.whatsapp.net`)
  await s.transport.send('dev', WRITTEN, { kind: 'reaction', target: { chat: WRITTEN, id: sent.id }, emoji: '👍' })
  await s.transport.send('dev', `+55 11 97777-6666`, { kind: 'delete', target: { chat: '+55 11 97777-6666', id: sent.id, fromMe: true } })
  const [reaction, revoke] = s.fake.sent('dev').slice(-2)
  assert.equal([reaction.jid, revoke.jid], [`${REGISTERED}@s.whatsapp.net`, `${REGISTERED}@s.whatsapp.net`])
  await s.transport.stop()
})

ninth('a read receipt for a message from the registered form, naming the sender with the 9, is sent', async () => {
  const s = await linkedBaileys()
  const received = waMessage({ chat: `${REGISTERED}@s.whatsapp.net`, message: { conversation: 'oi' } })
  await s.fake.deliver('dev', received)
  await s.transport.markRead('dev', { chat: WRITTEN, id: received.key.id! })
  const reads = s.fake.current('dev').calls.filter(c => c.method === 'readMessages')
  assert.equal(
    reads.map(c => c.args[0]),
    [[{ remoteJid: `${REGISTERED}@s.whatsapp.net`, fromMe: false, id: received.key.id! }]],
  )
  await s.transport.stop()
})

ninth('another number is still another chat (the 9 is the only difference forgiven)', async () => {
  const s = await linkedBaileys()
  s.fake.canonical.set(WRITTEN, REGISTERED)
  const sent = await s.transport.send('dev', WRITTEN, { kind: 'text', text: 'x' })
  const other = '5511977776667'
  await transportRejection(s.transport.send('dev', other, { kind: 'reaction', target: { chat: other, id: sent.id }, emoji: '👍' }), 'not-found')
  await s.transport.stop()
})

ninth.run()
