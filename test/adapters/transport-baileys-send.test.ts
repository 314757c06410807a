import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { Boom } from '@hapi/boom'
import type { OutgoingMessage } from '../../src/ports/transport.ts'
import { linkedBaileys } from '../helpers/baileys-setup.ts'
import { BOB, BOB_JID, GROUP, ME, waMessage } from '../helpers/baileys-fixtures.ts'
import type { SentRecord } from '../helpers/fake-baileys/index.ts'
import { RecordingStorage } from '../helpers/recording-storage.ts'
import { waitFor } from '../helpers/fake-baileys/index.ts'
import { transportRejection } from '../helpers/transport-errors.ts'

const send = suite('Baileys transport: sending')

async function open(options: Parameters<typeof linkedBaileys>[0] = {}) {
  const s = await linkedBaileys(options)
  s.fake.addGroup({ id: GROUP, subject: 'Group', members: [{ phone: ME, admin: true }, { phone: BOB }] })
  return s
}

function lastSent(s: { fake: { sent(id: string): SentRecord[] } }): SentRecord {
  const record = s.fake.sent('dev').at(-1)
  if (!record) throw new Error('nothing sent')
  return record
}

const png = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5f5b3a90000000049454e44ae426082',
  'hex',
)

send('text: { text } to the canonical JID; resolves with the id and timestamp, and remembers the key', async () => {
  const s = await open()
  const sent = await s.transport.send('dev', BOB, { kind: 'text', text: 'Olá' })
  const record = lastSent(s)
  assert.equal(record, { via: 'sendMessage', jid: BOB_JID, content: { text: 'Olá', linkPreview: null }, options: { messageId: sent.id }, id: sent.id })
  assert.match(sent.id, /^3EB0[0-9A-F]+$/)
  assert.ok(Math.abs(sent.timestamp - Date.now()) < 5_000)
  const stored = await s.storage.get<{ key: object }>(`device:dev:msg:${sent.id}`)
  assert.equal(stored?.key, { remoteJid: BOB_JID, fromMe: true, id: sent.id })
  assert.ok(s.storage.writes.some(w => w.key === `device:dev:msg:${sent.id}` && w.ttlMs === 7 * 24 * 3600_000))
  await s.transport.stop()
})

const mediaCases: [string, OutgoingMessage, object][] = [
  [
    'image',
    { kind: 'media', media: 'image', file: { data: png, mimetype: 'image/png' }, caption: 'look' },
    { image: png, mimetype: 'image/png', caption: 'look' },
  ],
  ['video', { kind: 'media', media: 'video', file: { data: png, mimetype: 'video/mp4' } }, { video: png, mimetype: 'video/mp4' }],
  ['audio', { kind: 'media', media: 'audio', file: { data: png, mimetype: 'audio/mpeg' } }, { audio: png, mimetype: 'audio/mpeg' }],
  [
    'document',
    { kind: 'media', media: 'document', file: { data: png, mimetype: 'application/pdf', fileName: 'a.pdf' }, caption: 'doc' },
    { document: png, mimetype: 'application/pdf', fileName: 'a.pdf', caption: 'doc' },
  ],
  [
    'document without a name',
    { kind: 'media', media: 'document', file: { data: png, mimetype: 'text/plain' } },
    { document: png, mimetype: 'text/plain', fileName: 'file' },
  ],
]

for (const [name, message, content] of mediaCases) {
  send(`${name}: the exact content, from bytes (never a {url})`, async () => {
    const s = await open()
    await s.transport.send('dev', BOB, message)
    const record = lastSent(s)
    assert.is(record.via, 'sendMessage')
    assert.equal(record.via === 'sendMessage' && record.content, content)
    await s.transport.stop()
  })
}

send('contact: a vCard with waid', async () => {
  const s = await open()
  await s.transport.send('dev', BOB, { kind: 'contact', name: 'Ana; Maria', phone: '+55 11 97777-0000' })
  const vcard = 'BEGIN:VCARD\nVERSION:3.0\nFN:Ana\\; Maria\nN:;Ana\\; Maria;;;\nTEL;type=CELL;type=VOICE;waid=5511977770000:+5511977770000\nEND:VCARD'
  assert.equal(lastSent(s).via === 'sendMessage' && (lastSent(s) as { content: object }).content, {
    contacts: { displayName: 'Ana; Maria', contacts: [{ displayName: 'Ana; Maria', vcard }] },
  })
  await s.transport.stop()
})

send('contact: a line break of any kind in the name (CR alone too) stays inside FN and N, never starts a vCard line of its own', async () => {
  const s = await open()
  await s.transport.send('dev', BOB, { kind: 'contact', name: 'Ana\rTEL;waid=1:+1\r\nX\u2028Y', phone: '+55 11 97777-0000' })
  const { vcard } = (lastSent(s) as { content: { contacts: { contacts: { vcard: string }[] } } }).content.contacts.contacts[0]!
  assert.equal(vcard.split(/\r\n|\r|\n|\u2028|\u2029|\u0085/), [
    'BEGIN:VCARD',
    'VERSION:3.0',
    'FN:Ana\\nTEL\\;waid=1:+1\\nX\\nY',
    'N:;Ana\\nTEL\\;waid=1:+1\\nX\\nY;;;',
    'TEL;type=CELL;type=VOICE;waid=5511977770000:+5511977770000',
    'END:VCARD',
  ])
  await s.transport.stop()
})

send('location: degrees and the optional name', async () => {
  const s = await open()
  await s.transport.send('dev', BOB, { kind: 'location', latitude: -23.5, longitude: -46.6, text: 'Praça' })
  assert.equal((lastSent(s) as { content: object }).content, { location: { degreesLatitude: -23.5, degreesLongitude: -46.6, name: 'Praça' } })
  await s.transport.send('dev', BOB, { kind: 'location', latitude: 1, longitude: 2 })
  assert.equal((lastSent(s) as { content: object }).content, { location: { degreesLatitude: 1, degreesLongitude: 2 } })
  await s.transport.stop()
})

send('reaction and its removal use the target key as received (participant in groups)', async () => {
  const s = await open()
  const received = waMessage({ chat: GROUP, participant: '777@lid', participantAlt: `${BOB}@s.whatsapp.net`, message: { conversation: 'hi' } })
  await s.fake.deliver('dev', received)
  const key = { remoteJid: GROUP, fromMe: false, id: received.key.id, participant: '777@lid' }
  await s.transport.send('dev', GROUP, { kind: 'reaction', target: { chat: GROUP, id: received.key.id! }, emoji: '👍' })
  assert.equal(lastSent(s), { ...lastSent(s), jid: GROUP, content: { react: { text: '👍', key } } })
  await s.transport.send('dev', GROUP, { kind: 'reaction', target: { chat: GROUP, id: received.key.id! }, emoji: '' })
  assert.equal((lastSent(s) as { content: object }).content, { react: { text: '', key } })
  await s.transport.stop()
})

send('delete for everyone uses the remembered key of the own send', async () => {
  const s = await open()
  const sent = await s.transport.send('dev', BOB, { kind: 'text', text: 'oops' })
  await s.transport.send('dev', BOB, { kind: 'delete', target: { chat: BOB, id: sent.id } })
  assert.equal(lastSent(s), { ...lastSent(s), jid: BOB_JID, content: { delete: { remoteJid: BOB_JID, fromMe: true, id: sent.id } } })
  await s.transport.stop()
})

send('delete of a group member message (as admin) keeps participant; a received 1:1 message cannot be deleted', async () => {
  const s = await open()
  const inGroup = waMessage({ chat: GROUP, participant: `${BOB}@s.whatsapp.net`, message: { conversation: 'spam' } })
  const direct = waMessage({ chat: BOB_JID, message: { conversation: 'hi' } })
  await s.fake.deliver('dev', [inGroup, direct])
  await s.transport.send('dev', GROUP, { kind: 'delete', target: { chat: GROUP, id: inGroup.key.id! } })
  assert.equal((lastSent(s) as { content: object }).content, { delete: { remoteJid: GROUP, fromMe: false, id: inGroup.key.id, participant: BOB_JID } })
  await transportRejection(s.transport.send('dev', BOB, { kind: 'delete', target: { chat: BOB, id: direct.key.id! } }), 'invalid')
  await s.transport.stop()
})

send('reactions and deletes of unknown messages are not-found', async () => {
  const s = await open()
  await transportRejection(s.transport.send('dev', BOB, { kind: 'delete', target: { chat: BOB, id: 'NOPE' } }), 'not-found')
  await transportRejection(s.transport.send('dev', BOB, { kind: 'reaction', target: { chat: BOB, id: 'NOPE' }, emoji: '👍' }), 'not-found')
  await s.transport.stop()
})

send('phone numbers resolve with onWhatsApp once (cached); JIDs pass through without a lookup', async () => {
  const s = await open()
  const socket = s.fake.current('dev')
  await s.transport.send('dev', '+55 (11) 98888-8000', { kind: 'text', text: '1' })
  await s.transport.send('dev', '5511988888000', { kind: 'text', text: '2' })
  assert.equal(
    socket.calls.filter(c => c.method === 'onWhatsApp').map(c => c.args),
    [['5511988888000']],
  )
  for (const jid of [GROUP, '987654321@lid', `${BOB}@s.whatsapp.net`, `${BOB}:3@s.whatsapp.net`]) {
    await s.transport.send('dev', jid, { kind: 'text', text: 'x' })
    assert.is(lastSent(s).jid, jid.replace(':3', ''))
  }
  assert.is(socket.calls.filter(c => c.method === 'onWhatsApp').length, 1)
  await s.transport.stop()
})

send('Brazilian ninth digit: the canonical JID from onWhatsApp, else the other form is tried', async () => {
  const s = await open()
  s.fake.canonical.set('5511977776666', '551177776666')
  await s.transport.send('dev', '5511977776666', { kind: 'text', text: 'a' })
  assert.is(lastSent(s).jid, '551177776666@s.whatsapp.net')
  s.fake.notOnWhatsApp.add('5521988887777')
  await s.transport.send('dev', '5521988887777', { kind: 'text', text: 'b' })
  assert.is(lastSent(s).jid, '552188887777@s.whatsapp.net')
  s.fake.notOnWhatsApp.add('556188887777')
  await s.transport.send('dev', '556188887777', { kind: 'text', text: 'c' })
  assert.is(lastSent(s).jid, '5561988887777@s.whatsapp.net')
  const lookups = s.fake
    .current('dev')
    .calls.filter(c => c.method === 'onWhatsApp')
    .map(c => c.args[0])
  assert.equal(lookups, ['5511977776666', '5521988887777', '552188887777', '556188887777', '5561988887777'])
  await s.transport.stop()
})

send('a number not on WhatsApp is not-found (and the miss is cached)', async () => {
  const s = await open()
  s.fake.notOnWhatsApp.add('15550001111')
  await transportRejection(s.transport.send('dev', '15550001111', { kind: 'text', text: 'x' }), 'not-found')
  await transportRejection(s.transport.send('dev', '15550001111', { kind: 'text', text: 'x' }), 'not-found')
  assert.is(s.fake.current('dev').calls.filter(c => c.method === 'onWhatsApp').length, 1)
  await s.transport.stop()
})

send('onWhatsApp answering undefined is no answer: failed (not not-found), and not cached as a miss', async () => {
  const s = await open()
  s.fake.onWhatsAppSilent = 1
  await transportRejection(s.transport.send('dev', BOB, { kind: 'text', text: 'x' }), 'failed')
  assert.equal(s.fake.sent('dev'), [])
  await s.transport.send('dev', BOB, { kind: 'text', text: 'y' })
  assert.is(lastSent(s).jid, BOB_JID, 'the next send asks again and goes out')
  await s.transport.stop()
})

send('read receipts: readMessages with the key as received, participant in groups', async () => {
  const s = await open()
  const direct = waMessage({ chat: '555@lid', remoteJidAlt: BOB_JID, message: { conversation: 'hi' } })
  const inGroup = waMessage({ chat: GROUP, participant: '777@lid', participantAlt: BOB_JID, message: { conversation: 'hey' } })
  await s.fake.deliver('dev', [direct, inGroup])
  await s.transport.markRead('dev', { chat: BOB, id: direct.key.id! })
  await s.transport.markRead('dev', { chat: GROUP, id: inGroup.key.id! })
  const reads = s.fake
    .current('dev')
    .calls.filter(c => c.method === 'readMessages')
    .map(c => c.args[0])
  assert.equal(reads, [
    [{ remoteJid: '555@lid', fromMe: false, id: direct.key.id }],
    [{ remoteJid: GROUP, fromMe: false, id: inGroup.key.id, participant: '777@lid' }],
  ])
  await s.transport.stop()
})

send('read receipts for unknown or own messages are not-found', async () => {
  const s = await open()
  const sent = await s.transport.send('dev', BOB, { kind: 'text', text: 'mine' })
  await transportRejection(s.transport.markRead('dev', { chat: BOB, id: 'UNKNOWN' }), 'not-found')
  await transportRejection(s.transport.markRead('dev', { chat: BOB, id: sent.id }), 'not-found')
  await s.transport.stop()
})

send('errors: not connected, rate-overlimit, closed socket, refused content, timed-out sends (each restarts the socket)', async () => {
  const s = await open({ sendTimeoutMs: 50 })
  await transportRejection(s.transport.send('other', BOB, { kind: 'text', text: 'x' }), 'not-connected')
  await transportRejection(s.transport.markRead('other', { chat: BOB, id: 'X' }), 'not-connected')
  s.fake.failNext('sendMessage', new Boom('rate-overlimit', { data: 429 }))
  await transportRejection(s.transport.send('dev', BOB, { kind: 'text', text: 'x' }), 'rate-limited')
  s.fake.failNext('sendMessage', new Boom('Connection Closed', { statusCode: 428 }))
  await transportRejection(s.transport.send('dev', BOB, { kind: 'text', text: 'x' }), 'not-connected')
  s.fake.failNext('sendMessage', new Boom('bad-request', { data: 400 }))
  await transportRejection(s.transport.send('dev', BOB, { kind: 'text', text: 'x' }), 'invalid')
  s.fake.failNext('sendMessage', new Error('something else'))
  await transportRejection(s.transport.send('dev', BOB, { kind: 'text', text: 'x' }), 'failed')
  const sockets = s.fake.sockets.length
  s.fake.failNext('relayMessage', new Boom('Timed Out', { statusCode: 408 }))
  await transportRejection(s.transport.send('dev', BOB, { kind: 'buttons', text: 'x', buttons: [{ type: 'reply', id: 'a', text: 'A' }] }), 'timeout')
  await waitFor(() => s.fake.sockets.length === sockets + 1 && s.statuses('dev').at(-1)?.state === 'open', 'restarted after the query timeout')
  s.fake.hanging.add('sendMessage')
  await transportRejection(s.transport.send('dev', BOB, { kind: 'text', text: 'x' }), 'timeout')
  s.fake.hanging.delete('sendMessage')
  await waitFor(() => s.fake.sockets.length === sockets + 2, 'restarted after the stalled send')
  await s.transport.stop()
})

send('malformed messages are refused before reaching the network', async () => {
  const s = await open()
  const bad: unknown[] = [
    { kind: 'text', text: '' },
    { kind: 'media', media: 'image', file: { data: 'not bytes', mimetype: 'image/png' } },
    { kind: 'media', media: 'sticker', file: { data: png, mimetype: 'image/webp' } },
    { kind: 'contact', name: 'A', phone: 'abc' },
    { kind: 'location', latitude: 91, longitude: 0 },
    { kind: 'reaction', target: { chat: BOB }, emoji: '👍' },
    { kind: 'buttons', text: 'x', buttons: [] },
    { kind: 'buttons', text: 'x', buttons: [{ type: 'url', text: 'a', url: 'file:///etc/passwd' }] },
    { kind: 'carousel', text: 'x', cards: [] },
    { kind: 'poll' },
  ]
  for (const message of bad) await transportRejection(s.transport.send('dev', BOB, message as OutgoingMessage), 'invalid')
  assert.equal(s.fake.sent('dev'), [])
  await transportRejection(s.transport.send('dev', 'not-a-number', { kind: 'text', text: 'x' }), 'invalid')
  await transportRejection(s.transport.send('dev', 'x@newsletter', { kind: 'text', text: 'x' }), 'invalid')
  await s.transport.stop()
})

send('an echo of an own send is not reported even before the send is remembered; a fromMe message from the phone is', async () => {
  const storage = new RecordingStorage()
  const s = await open({ storage })
  // Hold the write that remembers the send: the echo then arrives while only the in-memory ids know it.
  let release!: () => void
  const held = new Promise<void>(resolve => (release = resolve))
  const set = storage.set.bind(storage)
  storage.set = async (key, value, ttl) => (key.startsWith('device:dev:msg:') ? held.then(() => set(key, value, ttl)) : set(key, value, ttl))
  const sending = s.transport.send('dev', BOB, { kind: 'text', text: 'mine' })
  await waitFor(() => s.fake.sent('dev').length === 1, 'the send on the socket')
  const id = s.fake.sent('dev')[0].id
  await s.fake.deliver('dev', waMessage({ chat: BOB_JID, fromMe: true, id, message: { conversation: 'mine' } }), 'append')
  await s.fake.deliver('dev', waMessage({ chat: BOB_JID, fromMe: true, id: '3EB0FROMPHONE01', message: { conversation: 'typed on the phone' } }), 'append')
  release()
  await sending
  assert.equal(
    s.messages('dev').map(m => [m.id, m.fromMe]),
    [['3EB0FROMPHONE01', true]],
  )
  await s.transport.stop()
})

send.run()
