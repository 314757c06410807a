import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { linkedBaileys } from '../helpers/baileys-setup.ts'
import { BOB, BOB_JID, BOB_LID, GROUP, ME, ME_LID, waMessage } from '../helpers/baileys-fixtures.ts'
import { transportRejection } from '../helpers/transport-errors.ts'

/**
 * The chat a reaction, delete or read receipt names (operations 12 to 14: `to`) must be the chat of its
 * target, and a message deleted for everyone is gone: what the simulated network enforces, and what
 * the real stack let through (test/conformance/real-stack.test.ts, operations 13 and 14).
 */
const targets = suite('Baileys transport: targets of reactions, deletes and read receipts')

const CAROL = '5511977770003'

targets('a read receipt or reaction naming another chat than its target is not-found, and nothing is sent', async () => {
  const s = await linkedBaileys()
  const received = waMessage({ chat: BOB_JID, message: { conversation: 'leia' } })
  await s.fake.deliver('dev', received)
  const before = s.fake.sent('dev').length
  await transportRejection(s.transport.markRead('dev', { chat: CAROL, id: received.key.id! }), 'not-found')
  await transportRejection(s.transport.send('dev', CAROL, { kind: 'reaction', target: { chat: CAROL, id: received.key.id! }, emoji: '👍' }), 'not-found')
  const reads = s.fake.current('dev').calls.filter(c => c.method === 'readMessages')
  assert.equal([reads.length, s.fake.sent('dev').length], [0, before])
  await s.transport.markRead('dev', { chat: BOB, id: received.key.id! })
  assert.is(s.fake.current('dev').calls.filter(c => c.method === 'readMessages').length, 1, 'its own chat still works')
  await s.transport.stop()
})

targets('a message deleted for everyone is forgotten: deleting or reacting to it again is not-found', async () => {
  const s = await linkedBaileys()
  const sent = await s.transport.send('dev', BOB, { kind: 'text', text: 'oops' })
  await s.transport.send('dev', BOB, { kind: 'delete', target: { chat: BOB, id: sent.id, fromMe: true } })
  assert.is(await s.storage.get(`device:dev:msg:${sent.id}`), undefined)
  await transportRejection(s.transport.send('dev', BOB, { kind: 'delete', target: { chat: BOB, id: sent.id, fromMe: true } }), 'not-found')
  await transportRejection(s.transport.send('dev', BOB, { kind: 'reaction', target: { chat: BOB, id: sent.id }, emoji: '👍' }), 'not-found')
  await s.transport.stop()
})

targets(
  "a group message deleted for everyone by its sender, or by an admin, is forgotten: a reaction or read receipt is not-found; another member's message with the id stays",
  async () => {
    const s = await linkedBaileys()
    const admin = `${CAROL}@s.whatsapp.net`
    // Carol deletes Bob's message as an admin of the group (its metadata says so).
    s.fake.addGroup({ id: GROUP, subject: 'Loja', members: [{ phone: ME }, { phone: BOB }, { phone: CAROL, admin: true }] })
    const revoke = (from: string, id: string, participant: string) =>
      waMessage({ chat: GROUP, participant: from, message: { protocolMessage: { type: 0, key: { remoteJid: GROUP, fromMe: false, id, participant } } } })
    const own = waMessage({ chat: GROUP, participant: BOB_JID, message: { conversation: 'apago eu' } })
    const removed = waMessage({ chat: GROUP, participant: BOB_JID, message: { conversation: 'o admin apaga' } })
    const kept = waMessage({ chat: GROUP, participant: admin, id: removed.key.id!, message: { conversation: 'mesmo id, outro membro' } })
    await s.fake.deliver('dev', [own, removed, kept])
    await s.fake.deliver('dev', [revoke(BOB_JID, own.key.id!, BOB_JID), revoke(admin, removed.key.id!, BOB_JID)])
    await transportRejection(s.transport.send('dev', GROUP, { kind: 'reaction', target: { chat: GROUP, id: own.key.id! }, emoji: '👍' }), 'not-found')
    await transportRejection(s.transport.markRead('dev', { chat: BOB, id: own.key.id! }), 'not-found')
    await transportRejection(s.transport.markRead('dev', { chat: BOB, id: removed.key.id! }), 'not-found')
    await s.transport.markRead('dev', { chat: GROUP, id: kept.key.id! })
    const reads = s.fake.current('dev').calls.filter(c => c.method === 'readMessages')
    assert.equal(
      reads.map(c => c.args[0]),
      [[{ remoteJid: GROUP, fromMe: false, id: kept.key.id, participant: admin }]],
      "the other member's message is still read",
    )
    await s.transport.stop()
  },
)

targets("a plain member's revoke of another member's group message (WhatsApp's clients ignore it) leaves it: it is still read and reacted to", async () => {
  const s = await linkedBaileys()
  const group = s.fake.addGroup({ subject: 'Loja', members: [{ phone: ME }, { phone: BOB }, { phone: CAROL }] })
  const message = waMessage({ chat: group.id, participant: BOB_JID, message: { conversation: 'meu pedido' } })
  await s.fake.deliver('dev', message)
  const forged = { protocolMessage: { type: 0, key: { remoteJid: group.id, fromMe: false, id: message.key.id, participant: BOB_JID } } }
  await s.fake.deliver('dev', waMessage({ chat: group.id, participant: `${CAROL}@s.whatsapp.net`, message: forged }))
  await s.transport.markRead('dev', { chat: group.id, id: message.key.id! })
  await s.transport.send('dev', group.id, { kind: 'reaction', target: { chat: group.id, id: message.key.id! }, emoji: '👍' })
  const reads = s.fake.current('dev').calls.filter(c => c.method === 'readMessages')
  assert.equal(
    reads.map(c => c.args[0]),
    [[{ remoteJid: group.id, fromMe: false, id: message.key.id, participant: BOB_JID }]],
  )
  // Bob's own revoke, sent from his LID and naming him by phone (the LID mappings tell they are one member), still deletes it.
  s.fake.lidMappings.set(BOB_LID, BOB_JID)
  await s.fake.deliver('dev', waMessage({ chat: group.id, participant: BOB_LID, message: forged }))
  await transportRejection(s.transport.markRead('dev', { chat: group.id, id: message.key.id! }), 'not-found')
  await s.transport.stop()
})

targets(
  "the device's own group message deleted for everyone by an admin is forgotten: a retry request is not answered with it, a reaction or delete naming it is not-found",
  async () => {
    const s = await linkedBaileys()
    const admin = `${CAROL}@s.whatsapp.net`
    const group = s.fake.addGroup({ subject: 'Loja', members: [{ phone: ME }, { phone: CAROL, admin: true }, { phone: BOB }] })
    const getMessage = s.fake.current('dev').config.getMessage!
    // A member who is no admin cannot delete the device's message (WhatsApp's clients ignore such a revoke): it stays.
    const kept = await s.transport.send('dev', group.id, { kind: 'text', text: 'fica' })
    await s.fake.deliver(
      'dev',
      waMessage({
        chat: group.id,
        participant: BOB_JID,
        message: { protocolMessage: { type: 0, key: { remoteJid: group.id, fromMe: false, id: kept.id, participant: `${ME}@s.whatsapp.net` } } },
      }),
    )
    assert.ok(await getMessage({ remoteJid: group.id, fromMe: true, id: kept.id, participant: BOB_JID }), "a member's revoke leaves it")
    await s.transport.send('dev', group.id, { kind: 'delete', target: { chat: group.id, id: kept.id, fromMe: true } })
    // The admin's client names the author (the device's account) by phone in one case, by LID in the other.
    for (const author of [`${ME}@s.whatsapp.net`, ME_LID]) {
      const sent = await s.transport.send('dev', group.id, { kind: 'text', text: 'apagada pelo admin' })
      assert.ok(await getMessage({ remoteJid: group.id, fromMe: true, id: sent.id, participant: admin }), 'found before the revoke')
      const revoke = waMessage({
        chat: group.id,
        participant: admin,
        message: { protocolMessage: { type: 0, key: { remoteJid: group.id, fromMe: false, id: sent.id, participant: author } } },
      })
      await s.fake.deliver('dev', revoke)
      assert.ok(
        s.messages('dev').some(m => m.content.kind === 'delete' && m.content.target === sent.id),
        'the Deletada is reported',
      )
      assert.is(
        await getMessage({ remoteJid: group.id, fromMe: true, id: sent.id, participant: admin }),
        undefined,
        `a retry would send the deleted text again (author ${author})`,
      )
      await transportRejection(s.transport.send('dev', group.id, { kind: 'reaction', target: { chat: group.id, id: sent.id }, emoji: '👍' }), 'not-found')
      await transportRejection(s.transport.send('dev', group.id, { kind: 'delete', target: { chat: group.id, id: sent.id, fromMe: true } }), 'not-found')
    }
    await s.transport.stop()
  },
)

targets.run()
