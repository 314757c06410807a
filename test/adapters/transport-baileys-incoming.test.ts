import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { proto } from '@whiskeysockets/baileys'
import type { IncomingMessage, TransportEvent } from '../../src/ports/transport.ts'
import { linkedBaileys, setupBaileys } from '../helpers/baileys-setup.ts'
import { BOB, BOB_JID, BOB_LID, GROUP, ME, ME_LID, waMessage } from '../helpers/baileys-fixtures.ts'
import { settle, waitFor } from '../helpers/fake-baileys/index.ts'
import { RecordingStorage } from '../helpers/recording-storage.ts'

const incoming = suite('Baileys transport: incoming messages')

incoming('a 1:1 message by phone number: chat and from are the phone, to is the device', async () => {
  const s = await linkedBaileys()
  const message = waMessage({ chat: BOB_JID, remoteJidAlt: BOB_LID, pushName: 'Bob', timestamp: 1_700_000_123, message: { conversation: 'hi' } })
  await s.fake.deliver('dev', message)
  assert.equal(s.messages('dev'), [
    {
      id: message.key.id!,
      chat: BOB,
      from: BOB,
      fromLid: BOB_LID,
      to: ME,
      fromMe: false,
      isGroup: false,
      timestamp: 1_700_000_123_000,
      pushName: 'Bob',
      content: { kind: 'text', text: 'hi' },
    } satisfies IncomingMessage,
  ])
  await s.transport.stop()
})

incoming('a 1:1 message from a LID: from is the phone from remoteJidAlt, fromLid the LID', async () => {
  const s = await linkedBaileys()
  await s.fake.deliver('dev', waMessage({ chat: BOB_LID, remoteJidAlt: BOB_JID, message: { conversation: 'hi' } }))
  const [message] = s.messages('dev')
  assert.is(message.chat, BOB)
  assert.is(message.from, BOB)
  assert.is(message.fromLid, BOB_LID)
  await s.transport.stop()
})

incoming('a LID without remoteJidAlt: the phone from the LID mappings, else the LID names the chat', async () => {
  const s = await linkedBaileys()
  s.fake.lidMappings.set(BOB_LID, `${BOB}:0@s.whatsapp.net`)
  await s.fake.deliver('dev', waMessage({ chat: BOB_LID, message: { conversation: 'known' } }))
  await s.fake.deliver('dev', waMessage({ chat: '55554444@lid', message: { conversation: 'unknown' } }))
  const [known, unknown] = s.messages('dev')
  assert.equal([known.chat, known.from, known.fromLid], [BOB, BOB, BOB_LID])
  assert.equal([unknown.chat, unknown.from, unknown.fromLid], ['55554444@lid', undefined, '55554444@lid'])
  await s.transport.stop()
})

incoming('group messages: chat, group and to are the group; from the participant (PN or LID with participantAlt)', async () => {
  const s = await linkedBaileys()
  await s.fake.deliver('dev', [
    waMessage({ chat: GROUP, participant: BOB_LID, participantAlt: BOB_JID, message: { conversation: 'lid' } }),
    waMessage({ chat: GROUP, participant: `${BOB}:12@s.whatsapp.net`, participantAlt: BOB_LID, message: { conversation: 'pn' } }),
  ])
  for (const message of s.messages('dev')) {
    assert.equal(
      { chat: message.chat, group: message.group, to: message.to, isGroup: message.isGroup, from: message.from, fromLid: message.fromLid },
      { chat: GROUP, group: GROUP, to: GROUP, isGroup: true, from: BOB, fromLid: BOB_LID },
    )
  }
  await s.transport.stop()
})

incoming("'append' upserts (caught up after a reconnect) are reported like 'notify'", async () => {
  const s = await linkedBaileys()
  await s.fake.deliver('dev', waMessage({ chat: BOB_JID, message: { conversation: 'while away' } }), 'append')
  assert.equal(
    s.messages('dev').map(m => m.content),
    [{ kind: 'text', text: 'while away' }],
  )
  await s.transport.stop()
})

incoming('duplicates (same chat and id) are reported once, across upserts and restarts', async () => {
  const storage = new RecordingStorage()
  const s = await linkedBaileys({ storage })
  const message = waMessage({ chat: BOB_JID, id: 'DUP1', message: { conversation: 'once' } })
  await s.fake.deliver('dev', [message, message])
  await s.fake.deliver('dev', message, 'append')
  assert.is(s.messages('dev').length, 1)
  await s.transport.stop()
  const again = await setupBaileys({ storage })
  await again.transport.connect('dev')
  await waitFor(() => again.statuses('dev').at(-1)?.state === 'open', 'open')
  await again.fake.deliver('dev', message, 'append')
  assert.equal(again.messages('dev'), [])
  await again.transport.stop()
})

incoming('stubs without content, statuses, broadcasts and channels are skipped', async () => {
  const s = await linkedBaileys()
  await s.fake.deliver('dev', [
    waMessage({ chat: BOB_JID, message: null, stubType: 2 }),
    waMessage({ chat: 'status@broadcast', participant: BOB_JID, message: { conversation: 'status' } }),
    waMessage({ chat: '1234@broadcast', participant: BOB_JID, message: { conversation: 'list' } }),
    waMessage({ chat: '1203630000@newsletter', message: { conversation: 'channel' } }),
    waMessage({ chat: BOB_JID, message: { senderKeyDistributionMessage: { groupId: GROUP } } }),
  ])
  assert.equal(s.messages('dev'), [])
  await s.transport.stop()
})

incoming('a message Baileys marks view-once (key.isViewOnce) is not reported, also when the phone resends its content', async () => {
  // decryptMessageNode sets key.isViewOnce on <unavailable type="view_once"/>; the CIPHERTEXT stub then asks the
  // phone for the content (placeholder resend) and Baileys upserts the answer under the cached original key.
  const s = await linkedBaileys({ inlineMediaMaxBytes: 0 })
  const placeholder = waMessage({ chat: BOB_JID, message: null, stubType: 2 })
  placeholder.key.isViewOnce = true
  const resent = waMessage({
    chat: BOB_JID,
    id: placeholder.key.id!,
    message: { viewOnceMessageV2: { message: { imageMessage: { mimetype: 'image/jpeg', viewOnce: true } } } },
  })
  resent.key.isViewOnce = true
  await s.fake.deliver('dev', placeholder)
  await s.fake.deliver('dev', resent)
  await s.fake.deliver('dev', waMessage({ chat: BOB_JID, message: { conversation: 'after' } }))
  assert.equal(
    s.messages('dev').map(m => m.content),
    [{ kind: 'text', text: 'after' }],
  )
  await s.transport.stop()
})

incoming('a group message that decrypted only in part (its sender key, not its text) is reported when the retry brings it whole', async () => {
  // Baileys' decryptMessageNode: the pairwise <enc> (the sender key distribution) decrypts, the skmsg fails;
  // the message is upserted with that part only and messageStubType CIPHERTEXT, a retry receipt goes out,
  // and the sender's resend (same id) decrypts whole.
  const s = await linkedBaileys()
  const partial = waMessage({ chat: GROUP, id: 'RETRIED', participant: BOB_JID, stubType: 2, message: { senderKeyDistributionMessage: { groupId: GROUP } } })
  partial.messageStubParameters = ['No SenderKeyRecord found for decryption']
  await s.fake.deliver('dev', partial)
  await s.fake.deliver('dev', waMessage({ chat: GROUP, id: 'RETRIED', participant: BOB_JID, message: { conversation: 'whole at last' } }))
  assert.equal(
    s.messages('dev').map(m => [m.id, m.from, m.content]),
    [['RETRIED', BOB, { kind: 'text', text: 'whole at last' }]],
  )
  await s.transport.stop()
})

incoming('a revoke is reported from messages.upsert only (messages.update is ignored)', async () => {
  const s = await linkedBaileys()
  const socket = s.fake.current('dev')
  const revoke = waMessage({
    chat: BOB_JID,
    message: { protocolMessage: { type: proto.Message.ProtocolMessage.Type.REVOKE, key: { remoteJid: BOB_JID, id: 'GONE' } } },
  })
  await s.fake.deliver('dev', revoke)
  socket.ev.emit('messages.update', [{ key: { remoteJid: BOB_JID, id: 'GONE' }, update: { message: null, messageStubType: 1 } }])
  socket.ev.emit('messages.reaction', [{ key: { remoteJid: BOB_JID, id: 'GONE' }, reaction: { text: '👍' } }])
  await settle()
  assert.equal(
    s.messages('dev').map(m => m.content),
    [{ kind: 'delete', target: 'GONE' }],
  )
  await s.transport.stop()
})

incoming('fromMe messages sent from the phone are reported (fromMe true, chat the other party)', async () => {
  const s = await linkedBaileys()
  await s.fake.deliver('dev', [
    waMessage({ chat: BOB_JID, fromMe: true, message: { conversation: 'typed on the phone' } }),
    waMessage({ chat: BOB_LID, fromMe: true, remoteJidAlt: `${ME}@s.whatsapp.net`, message: { conversation: 'to a LID' } }),
    waMessage({ chat: GROUP, fromMe: true, participant: ME_LID, message: { conversation: 'in a group' } }),
  ])
  s.fake.lidMappings.set(BOB_LID, BOB_JID)
  const [direct, lid, group] = s.messages('dev')
  assert.equal([direct.fromMe, direct.chat, direct.from, direct.fromLid, direct.to], [true, BOB, ME, ME_LID, BOB])
  assert.is(lid.chat, BOB_LID, 'our own alt id is never taken for the other party')
  assert.equal([group.fromMe, group.chat, group.from, group.to], [true, GROUP, ME, GROUP])
  assert.is(direct.pushName, undefined)
  await s.transport.stop()
})

incoming('media up to inlineMediaMaxBytes carries base64 of the downloaded bytes', async () => {
  const s = await linkedBaileys({ inlineMediaMaxBytes: 10 })
  const small = waMessage({ chat: BOB_JID, id: 'SMALL', message: { imageMessage: { mimetype: 'image/png', fileLength: 4 } } })
  s.fake.media.set('SMALL', Buffer.from('tiny'))
  await s.fake.deliver('dev', small)
  assert.equal(s.messages('dev')[0].content, { kind: 'image', mimetype: 'image/png', base64: Buffer.from('tiny').toString('base64') })
  await s.transport.stop()
})

incoming('larger media carries metadata only, and transport.downloadMedia(deviceId, { chat, id, fromMe }) fetches the bytes', async () => {
  const s = await linkedBaileys({ inlineMediaMaxBytes: 10 })
  const big = waMessage({ chat: BOB_JID, id: 'BIG', message: { documentMessage: { mimetype: 'application/pdf', fileName: 'big.pdf', fileLength: 5_000 } } })
  s.fake.media.set('BIG', Buffer.alloc(5_000, 1))
  await s.fake.deliver('dev', big)
  assert.equal(s.messages('dev')[0].content, { kind: 'document', mimetype: 'application/pdf', fileName: 'big.pdf' })
  assert.equal(s.fake.downloads, [], 'not downloaded when announced too large')
  const media = await s.transport.downloadMedia('dev', { chat: BOB, id: 'BIG', fromMe: false })
  assert.equal(media, { data: Buffer.alloc(5_000, 1), mimetype: 'application/pdf', fileName: 'big.pdf' })
  assert.is(await s.transport.downloadMedia('dev', { chat: BOB, id: 'UNKNOWN', fromMe: false }), undefined)
  await s.transport.stop()
})

incoming('a failed media download still reports the message, with metadata only', async () => {
  const s = await linkedBaileys()
  await s.fake.deliver('dev', waMessage({ chat: BOB_JID, id: 'LOST', message: { videoMessage: { mimetype: 'video/mp4' } } }))
  assert.equal(s.messages('dev')[0].content, { kind: 'video', mimetype: 'video/mp4' })
  assert.equal(s.fake.downloads, ['LOST'])
  await s.transport.stop()
})

incoming('media waiting for its download is bounded per device: past 100 waiting, media is reported at once with metadata only', async () => {
  const hung: string[] = []
  // A media host that never answers: each download waits its whole time-out (sendTimeoutMs), 4 at a time.
  const s = await linkedBaileys({ downloadMedia: async message => (hung.push(message.key.id!), new Promise<Buffer>(() => {})) })
  const image = (i: number) => waMessage({ chat: BOB_JID, id: `IMG${i}`, message: { imageMessage: { mimetype: 'image/jpeg', fileLength: 10 } } })
  await s.fake.deliver(
    'dev',
    Array.from({ length: 4 + 100 + 2 }, (_, i) => image(i)),
  )
  await waitFor(() => s.messages('dev').length >= 2, 'the media past the bound')
  assert.equal(
    s.messages('dev').map(m => [m.id, m.content]),
    [
      ['IMG104', { kind: 'image', mimetype: 'image/jpeg' }],
      ['IMG105', { kind: 'image', mimetype: 'image/jpeg' }],
    ],
  )
  assert.is(hung.length, 4)
  await s.transport.stop()
  assert.is(s.messages('dev').length, 106, 'stop() reports the waiting ones, metadata only')
})

incoming('each message is recorded by the gateway before the next is looked at', async () => {
  const fakeLog: string[] = []
  let release!: () => void
  const blocked = new Promise<void>(resolve => (release = resolve))
  const s = await linkedBaileys()
  const events: TransportEvent[] = []
  // Re-start the transport with an emit that blocks on the first message.
  await s.transport.stop()
  const storage = s.storage
  const { baileysTransport } = await import('../../adapters/transport-baileys/index.ts')
  const transport = baileysTransport(s.fake.transportOptions())
  await transport.start({
    storage,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    emit: async event => {
      events.push(event)
      if (event.type === 'message') {
        fakeLog.push(`start ${event.message.id}`)
        if (event.message.id === 'FIRST') await blocked
        fakeLog.push(`done ${event.message.id}`)
      }
    },
  })
  await transport.connect('dev')
  await waitFor(() => events.some(e => e.type === 'status' && e.status.state === 'open'), 'open')
  s.fake.current('dev').upsert([waMessage({ chat: BOB_JID, id: 'FIRST', message: { conversation: '1' } })])
  s.fake.current('dev').upsert([waMessage({ chat: BOB_JID, id: 'SECOND', message: { conversation: '2' } })])
  await settle()
  assert.equal(fakeLog, ['start FIRST'])
  release()
  await waitFor(() => fakeLog.length === 4, 'both recorded')
  assert.equal(fakeLog, ['start FIRST', 'done FIRST', 'start SECOND', 'done SECOND'])
  await transport.stop()
})

incoming('received keys are remembered with the TTL (for reactions, deletes and read receipts)', async () => {
  const s = await linkedBaileys({ messageTtlMs: 60_000 })
  await s.fake.deliver('dev', waMessage({ chat: GROUP, id: 'G1', participant: BOB_LID, participantAlt: BOB_JID, message: { conversation: 'x' } }))
  const stored = await s.storage.get<{ until: number }>('device:dev:msg:G1')
  assert.equal(stored, {
    key: { remoteJid: GROUP, fromMe: false, id: 'G1', participant: BOB_LID, participantAlt: BOB_JID },
    timestamp: 1_700_000_000_000,
    until: stored!.until,
  })
  assert.ok(s.storage.writes.some(w => w.key === 'device:dev:msg:G1' && w.ttlMs === 60_000 && stored!.until - Date.now() <= 60_000))
  await s.transport.stop()
})

incoming.run()
