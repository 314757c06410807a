import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { linkedBaileys } from '../helpers/baileys-setup.ts'
import { BOB, BOB_JID, GROUP, ME, waMessage } from '../helpers/baileys-fixtures.ts'

/**
 * A revoke deletes a message for everyone only when its sender may delete it: its own message, or in a
 * group another member's when the sender is an admin. WhatsApp's clients ignore any other revoke (the
 * server cannot read it to refuse it), and the simulated network refuses such a delete (only the sender
 * deletes a message): no `Deletada` is reported for one.
 */
const ignored = suite('Baileys transport: revokes WhatsApp ignores are no Deletada')

const CAROL = '5511977770003'
const revoke = (key: { remoteJid: string; fromMe: boolean; id: string; participant?: string }) => ({ protocolMessage: { type: 0, key } })

ignored("a contact's revoke naming a message it received (the device's own) is not reported; one of its own message is", async () => {
  const s = await linkedBaileys()
  const sent = await s.transport.send('dev', BOB, { kind: 'text', text: 'nossa oferta' })
  const received = waMessage({ chat: BOB_JID, message: { conversation: 'oi' } })
  await s.fake.deliver('dev', received)
  // From Bob's side: the device's message is one he received (fromMe false), his own one he sent (fromMe true).
  await s.fake.deliver('dev', waMessage({ chat: BOB_JID, message: revoke({ remoteJid: `${ME}@s.whatsapp.net`, fromMe: false, id: sent.id }) }))
  await s.fake.deliver('dev', waMessage({ chat: BOB_JID, message: revoke({ remoteJid: `${ME}@s.whatsapp.net`, fromMe: true, id: received.key.id! }) }))
  assert.equal(
    s.messages('dev').flatMap(m => (m.content.kind === 'delete' ? [m.content.target] : [])),
    [received.key.id],
  )
  await s.transport.send('dev', BOB, { kind: 'reaction', target: { chat: BOB, id: sent.id }, emoji: '👍' })
  await s.transport.stop()
})

ignored("a plain member's revoke of another member's group message is not reported; an admin's is", async () => {
  const s = await linkedBaileys()
  const group = s.fake.addGroup({ subject: 'Loja', members: [{ phone: ME }, { phone: BOB }, { phone: CAROL }, { phone: '5511966660004', admin: true }] })
  const message = waMessage({ chat: group.id, participant: BOB_JID, message: { conversation: 'meu pedido' } })
  await s.fake.deliver('dev', message)
  const named = { remoteJid: group.id, fromMe: false, id: message.key.id!, participant: BOB_JID }
  await s.fake.deliver('dev', waMessage({ chat: group.id, participant: `${CAROL}@s.whatsapp.net`, message: revoke(named) }))
  assert.equal(
    s.messages('dev').map(m => m.content.kind),
    ['text'],
    'no Deletada for a revoke WhatsApp ignores',
  )
  await s.fake.deliver('dev', waMessage({ chat: group.id, participant: '5511966660004@s.whatsapp.net', message: revoke(named) }))
  assert.equal(
    s.messages('dev').map(m => m.content),
    [
      { kind: 'text', text: 'meu pedido' },
      { kind: 'delete', target: message.key.id },
    ],
  )
  await s.transport.stop()
})

ignored("a revoke of another member's message in a group whose metadata cannot be had is reported (an admin's may be)", async () => {
  const s = await linkedBaileys()
  const message = waMessage({ chat: GROUP, participant: BOB_JID, message: { conversation: 'meu pedido' } })
  await s.fake.deliver('dev', message)
  const named = { remoteJid: GROUP, fromMe: false, id: message.key.id!, participant: BOB_JID }
  await s.fake.deliver('dev', waMessage({ chat: GROUP, participant: `${CAROL}@s.whatsapp.net`, message: revoke(named) }))
  assert.equal(
    s.messages('dev').map(m => m.content.kind),
    ['text', 'delete'],
  )
  await s.transport.stop()
})

ignored.run()
