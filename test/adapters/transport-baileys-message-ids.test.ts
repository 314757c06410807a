import { suite } from 'uvu'
import type { WAMessage } from '@whiskeysockets/baileys'
import * as assert from 'uvu/assert'
import { linkedBaileys, setupBaileys } from '../helpers/baileys-setup.ts'
import { BOB, BOB_JID, BOB_LID, GROUP, ME, waMessage } from '../helpers/baileys-fixtures.ts'
import { waitFor } from '../helpers/fake-baileys/index.ts'
import type { RecordingStorage } from '../helpers/recording-storage.ts'
import { transportRejection } from '../helpers/transport-errors.ts'

/**
 * Message ids are chosen by the sender's client, and WhatsApp scopes them by chat, direction (fromMe) and,
 * in groups, sender (a key is remoteJid, fromMe, id, participant). A contact may send a message with the
 * id of a message of another chat: it is another message, reported, and reactions, deletes and read
 * receipts naming a chat and an id still reach the message of that chat. The same message delivered
 * again (under the phone or the LID form of one contact) is still reported once.
 */
const ids = suite('Baileys transport: message ids are scoped by chat, direction and group sender')

const CAROL = '5511977770003'
const CAROL_JID = `${CAROL}@s.whatsapp.net`
const DAVE_JID = '5511966660004@s.whatsapp.net'

/** The transport restarted on the same storage (only the message store remembers what was reported). */
async function restarted(storage: RecordingStorage) {
  const again = await setupBaileys({ storage })
  await again.transport.connect('dev')
  await waitFor(() => again.statuses('dev').at(-1)?.state === 'open', 'open')
  return again
}

ids('two messages with one id in two chats are both reported, and each chat reaches its own', async () => {
  const s = await linkedBaileys()
  const bob = waMessage({ chat: BOB_JID, id: 'SAMEID', message: { conversation: 'from bob' } })
  const carol = waMessage({ chat: CAROL_JID, id: 'SAMEID', message: { conversation: 'from carol' } })
  await s.fake.deliver('dev', bob)
  await s.fake.deliver('dev', carol)
  assert.equal(
    s.messages('dev').map(m => [m.chat, m.id, m.content]),
    [
      [BOB, 'SAMEID', { kind: 'text', text: 'from bob' }],
      [CAROL, 'SAMEID', { kind: 'text', text: 'from carol' }],
    ],
  )
  await s.transport.markRead('dev', { chat: CAROL, id: 'SAMEID' })
  await s.transport.markRead('dev', { chat: BOB, id: 'SAMEID' })
  const reads = s.fake.current('dev').calls.filter(c => c.method === 'readMessages')
  assert.equal(
    reads.map(c => c.args[0]),
    [[{ remoteJid: CAROL_JID, fromMe: false, id: 'SAMEID' }], [{ remoteJid: BOB_JID, fromMe: false, id: 'SAMEID' }]],
  )
  await s.transport.send('dev', CAROL, { kind: 'reaction', target: { chat: CAROL, id: 'SAMEID' }, emoji: '👍' })
  assert.is(s.fake.sent('dev').at(-1)!.jid, CAROL_JID)
  await s.transport.stop()
  const again = await restarted(s.storage)
  await again.fake.deliver('dev', [bob, carol], 'append')
  assert.equal(again.messages('dev'), [], 'both remembered across a restart: true duplicates')
  await again.transport.stop()
})

ids("markRead of a group message named by its sender's number (the API's `to`) reads it in the group; another member's number does not", async () => {
  const s = await linkedBaileys()
  const fromBob = waMessage({ chat: GROUP, participant: BOB_JID, id: 'INGROUP', message: { conversation: 'oi, grupo' } })
  await s.fake.deliver('dev', fromBob)
  await transportRejection(s.transport.markRead('dev', { chat: CAROL, id: 'INGROUP' }), 'not-found')
  await s.transport.markRead('dev', { chat: BOB, id: 'INGROUP' })
  await s.transport.markRead('dev', { chat: GROUP, id: 'INGROUP' })
  const reads = s.fake.current('dev').calls.filter(c => c.method === 'readMessages')
  const inGroup = { remoteJid: GROUP, fromMe: false, id: 'INGROUP', participant: BOB_JID }
  assert.equal(
    reads.map(c => c.args[0]),
    [[inGroup], [inGroup]],
  )
  await s.transport.stop()
})

ids('a contact reusing the id of an own send (in its chat or another) is reported; the delete still takes the own message', async () => {
  const s = await linkedBaileys()
  const sent = await s.transport.send('dev', BOB, { kind: 'text', text: 'mine' })
  await s.fake.deliver('dev', [
    waMessage({ chat: CAROL_JID, id: sent.id, message: { conversation: 'carol copies the id' } }),
    waMessage({ chat: BOB_JID, id: sent.id, message: { conversation: 'bob copies the id' } }),
  ])
  assert.equal(
    s.messages('dev').map(m => [m.chat, m.fromMe, m.content]),
    [
      [CAROL, false, { kind: 'text', text: 'carol copies the id' }],
      [BOB, false, { kind: 'text', text: 'bob copies the id' }],
    ],
  )
  await s.transport.send('dev', BOB, { kind: 'delete', target: { chat: BOB, id: sent.id, fromMe: true } })
  const deleted = s.fake.sent('dev').at(-1)!
  assert.equal(deleted.via === 'sendMessage' && deleted.content, { delete: { remoteJid: BOB_JID, fromMe: true, id: sent.id } })
  await s.transport.markRead('dev', { chat: BOB, id: sent.id })
  const [read] = s.fake.current('dev').calls.filter(c => c.method === 'readMessages')
  assert.equal(read.args[0], [{ remoteJid: BOB_JID, fromMe: false, id: sent.id }], "bob's copy is still there to read")
  await s.transport.stop()
})

ids('in a group, two senders with one id are two messages; one sender again is a duplicate', async () => {
  const s = await linkedBaileys()
  const fromBob = waMessage({ chat: GROUP, id: 'GID', participant: BOB_LID, participantAlt: BOB_JID, message: { conversation: 'bob' } })
  await s.fake.deliver('dev', [
    fromBob,
    waMessage({ chat: GROUP, id: 'GID', participant: DAVE_JID, message: { conversation: 'dave' } }),
    waMessage({ chat: GROUP, id: 'GID', participant: BOB_JID, participantAlt: BOB_LID, message: { conversation: 'bob' } }),
  ])
  assert.equal(
    s.messages('dev').map(m => m.content),
    [
      { kind: 'text', text: 'bob' },
      { kind: 'text', text: 'dave' },
    ],
  )
  await s.transport.stop()
  const again = await restarted(s.storage)
  await again.fake.deliver('dev', fromBob, 'append')
  assert.equal(again.messages('dev'), [])
  await again.transport.stop()
})

ids('one message delivered under the LID and the phone form of its chat is reported once, also across a restart', async () => {
  const s = await linkedBaileys()
  await s.fake.deliver('dev', [
    waMessage({ chat: BOB_LID, remoteJidAlt: BOB_JID, id: 'TWICE', message: { conversation: 'once' } }),
    waMessage({ chat: BOB_JID, remoteJidAlt: BOB_LID, id: 'TWICE', message: { conversation: 'once' } }),
  ])
  s.fake.lidMappings.set(BOB_LID, BOB_JID)
  // No alternate id in the keys: the LID mappings tell that both forms are one chat.
  await s.fake.deliver('dev', [
    waMessage({ chat: BOB_LID, id: 'MAPPED', message: { conversation: 'mapped' } }),
    waMessage({ chat: BOB_JID, id: 'MAPPED', message: { conversation: 'mapped' } }),
  ])
  assert.equal(
    s.messages('dev').map(m => [m.id, m.chat]),
    [
      ['TWICE', BOB],
      ['MAPPED', BOB],
    ],
  )
  await s.transport.stop()
  const again = await restarted(s.storage)
  again.fake.lidMappings.set(BOB_LID, BOB_JID)
  await again.fake.deliver(
    'dev',
    [
      waMessage({ chat: BOB_JID, id: 'TWICE', message: { conversation: 'once' } }),
      waMessage({ chat: BOB_LID, id: 'TWICE', message: { conversation: 'once' } }),
      waMessage({ chat: BOB_JID, id: 'MAPPED', message: { conversation: 'mapped' } }),
    ],
    'append',
  )
  assert.equal(again.messages('dev'), [])
  await again.transport.stop()
})

ids(
  'downloadMedia serves the media of the message its target names (chat, direction, group sender as the event gave them), never another with its id',
  async () => {
    // Bytes that say which message was downloaded: its chat, direction and group sender.
    const downloadMedia = async (m: WAMessage) => Buffer.from(`${m.key.remoteJid} ${m.key.fromMe} ${m.key.participant ?? '-'}`)
    const s = await linkedBaileys({ inlineMediaMaxBytes: 10, downloadMedia })
    s.fake.lidMappings.set(BOB_LID, BOB_JID)
    const pdf = { documentMessage: { mimetype: 'application/pdf', fileLength: 5_000 } }
    await s.fake.deliver('dev', [
      waMessage({ chat: BOB_LID, id: 'MEDIA', message: pdf }), // reported under the phone the LID mappings know
      waMessage({ chat: CAROL_JID, id: 'MEDIA', message: pdf }),
      waMessage({ chat: GROUP, id: 'MEDIA', participant: BOB_LID, participantAlt: BOB_JID, message: pdf }),
      waMessage({ chat: GROUP, id: 'MEDIA', participant: DAVE_JID, message: pdf }),
      waMessage({ chat: CAROL_JID, id: 'MEDIA', fromMe: true, message: pdf }),
      waMessage({ chat: CAROL_JID, id: 'ALONE', message: pdf }),
    ])
    const served = []
    for (const m of s.messages('dev')) {
      const participant = m.isGroup && !m.fromMe ? (m.fromLid ?? m.from) : undefined
      const media = await s.transport.downloadMedia('dev', { chat: m.chat, id: m.id, fromMe: m.fromMe, ...(participant ? { participant } : {}) })
      served.push(media?.data.toString())
    }
    assert.equal(served, [
      `${BOB_LID} false -`,
      `${CAROL_JID} false -`,
      `${GROUP} false ${BOB_LID}`,
      `${GROUP} false ${DAVE_JID}`,
      `${CAROL_JID} true -`,
      `${CAROL_JID} false -`,
    ])
    assert.is(await s.transport.downloadMedia('dev', { chat: BOB, id: 'ALONE', fromMe: false }), undefined, 'not in that chat')
    // A media link of 0.1.0 or earlier names the id alone: served only when one message has it.
    assert.is((await s.transport.downloadMedia('dev', { id: 'ALONE' }))?.data.toString(), `${CAROL_JID} false -`)
    assert.is(await s.transport.downloadMedia('dev', { id: 'MEDIA' }), undefined, 'five messages have that id')
    await s.transport.stop()
  },
)

ids("in a group, a target two senders' messages share is refused (not-found), never one of them picked; the own message first for a delete", async () => {
  const s = await linkedBaileys()
  s.fake.addGroup({ id: GROUP, subject: 'Group', members: [{ phone: ME }, { phone: BOB }, { phone: '5511966660004' }] })
  // Dave copies the id of Bob's message: the client, which names a target by chat and id, cannot tell them apart.
  await s.fake.deliver('dev', [
    waMessage({ chat: GROUP, id: 'GID', participant: BOB_JID, message: { conversation: 'bob' } }),
    waMessage({ chat: GROUP, id: 'GID', participant: DAVE_JID, message: { conversation: 'dave copies the id' } }),
  ])
  const target = { chat: GROUP, id: 'GID' }
  await transportRejection(s.transport.markRead('dev', target), 'not-found')
  await transportRejection(s.transport.send('dev', GROUP, { kind: 'reaction', target, emoji: '👍' }), 'not-found')
  await transportRejection(s.transport.send('dev', GROUP, { kind: 'delete', target: { ...target, fromMe: true } }), 'not-found')
  assert.equal(
    s.fake.current('dev').calls.filter(c => c.method === 'readMessages'),
    [],
  )
  assert.equal(s.fake.sent('dev'), [])
  // A sender named (as the port allows) tells them apart.
  await s.transport.markRead('dev', { ...target, participant: DAVE_JID })
  const [read] = s.fake.current('dev').calls.filter(c => c.method === 'readMessages')
  assert.equal(read.args[0], [{ remoteJid: GROUP, fromMe: false, id: 'GID', participant: DAVE_JID }])
  // An own message and Dave's copy of its id: the delete takes the own one, a reaction cannot tell.
  const own = await s.transport.send('dev', GROUP, { kind: 'text', text: 'mine' })
  await s.fake.deliver('dev', waMessage({ chat: GROUP, id: own.id, participant: DAVE_JID, message: { conversation: 'dave again' } }))
  await transportRejection(s.transport.send('dev', GROUP, { kind: 'reaction', target: { chat: GROUP, id: own.id }, emoji: '👍' }), 'not-found')
  await s.transport.send('dev', GROUP, { kind: 'delete', target: { chat: GROUP, id: own.id, fromMe: true } })
  const deleted = s.fake.sent('dev').at(-1)!
  assert.equal(deleted.via === 'sendMessage' && deleted.content, { delete: { remoteJid: GROUP, fromMe: true, id: own.id } })
  await s.transport.stop()
})

ids.run()
