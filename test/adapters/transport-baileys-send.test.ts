import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { Boom } from '@hapi/boom'
import { proto } from '@whiskeysockets/baileys'
import { TransportError, type OutgoingMessage } from '../../src/ports/transport.ts'
import { setupBaileys, type SetupOptions } from '../helpers/baileys-setup.ts'
import { waMessage } from '../helpers/baileys-fixtures.ts'
import type { SentRecord } from '../helpers/fake-baileys-socket.ts'
import { RecordingStorage } from '../helpers/recording-storage.ts'

const send = suite('Baileys transport: sending')

const ME = '5511999990000'
const BOB = '5511888880000'
const BOB_JID = `${BOB}@s.whatsapp.net`
const GROUP = '120363000000000001@g.us'

async function open(options: SetupOptions = {}) {
  const storage = new RecordingStorage()
  const s = await setupBaileys({ storage, ...options })
  await s.linked('dev', ME, '11112222@lid')
  return { ...s, storage }
}

function lastSent(s: { fake: { sent(id: string): SentRecord[] } }): SentRecord {
  const record = s.fake.sent('dev').at(-1)
  if (!record) throw new Error('nothing sent')
  return record
}

async function fails(promise: Promise<unknown>, code: TransportError['code']): Promise<void> {
  try {
    await promise
  } catch (error) {
    assert.instance(error, TransportError, String(error))
    assert.is((error as TransportError).code, code, (error as Error).message)
    return
  }
  assert.unreachable(`expected ${code}`)
}

const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5f5b3a90000000049454e44ae426082', 'hex')

send('text: { text } to the canonical JID; resolves with the id and timestamp, and remembers the key', async () => {
  const s = await open()
  const sent = await s.transport.send('dev', BOB, { kind: 'text', text: 'Olá' })
  const record = lastSent(s)
  assert.equal(record, { via: 'sendMessage', jid: BOB_JID, content: { text: 'Olá' }, options: { messageId: sent.id }, id: sent.id })
  assert.match(sent.id, /^3EB0[0-9A-F]+$/)
  assert.ok(Math.abs(sent.timestamp - Date.now()) < 5_000)
  const stored = await s.storage.get<{ key: object }>(`device:dev:msg:${sent.id}`)
  assert.equal(stored?.key, { remoteJid: BOB_JID, fromMe: true, id: sent.id })
  assert.ok(s.storage.writes.some(w => w.key === `device:dev:msg:${sent.id}` && w.ttlMs === 7 * 24 * 3600_000))
  await s.transport.stop()
})

const mediaCases: [string, OutgoingMessage, object][] = [
  ['image', { kind: 'media', media: 'image', file: { data: png, mimetype: 'image/png' }, caption: 'look' }, { image: png, mimetype: 'image/png', caption: 'look' }],
  ['video', { kind: 'media', media: 'video', file: { data: png, mimetype: 'video/mp4' } }, { video: png, mimetype: 'video/mp4' }],
  ['audio', { kind: 'media', media: 'audio', file: { data: png, mimetype: 'audio/mpeg' } }, { audio: png, mimetype: 'audio/mpeg' }],
  [
    'voice note',
    { kind: 'media', media: 'audio', file: { data: png, mimetype: 'audio/ogg' }, voiceNote: true },
    { audio: png, ptt: true, mimetype: 'audio/ogg; codecs=opus' },
  ],
  [
    'document',
    { kind: 'media', media: 'document', file: { data: png, mimetype: 'application/pdf', fileName: 'a.pdf' }, caption: 'doc' },
    { document: png, mimetype: 'application/pdf', fileName: 'a.pdf', caption: 'doc' },
  ],
  ['document without a name', { kind: 'media', media: 'document', file: { data: png, mimetype: 'text/plain' } }, { document: png, mimetype: 'text/plain', fileName: 'file' }],
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
  await fails(s.transport.send('dev', BOB, { kind: 'delete', target: { chat: BOB, id: direct.key.id! } }), 'invalid')
  await s.transport.stop()
})

send('reactions and deletes of unknown messages are not-found', async () => {
  const s = await open()
  await fails(s.transport.send('dev', BOB, { kind: 'delete', target: { chat: BOB, id: 'NOPE' } }), 'not-found')
  await fails(s.transport.send('dev', BOB, { kind: 'reaction', target: { chat: BOB, id: 'NOPE' }, emoji: '👍' }), 'not-found')
  await s.transport.stop()
})

send('buttons: interactiveMessage/nativeFlowMessage in viewOnceMessage through relayMessage, with biz and bot nodes in 1:1', async () => {
  const s = await open()
  const sent = await s.transport.send('dev', BOB, {
    kind: 'buttons',
    text: 'Choose:',
    header: 'Title',
    footer: 'footer',
    buttons: [
      { type: 'reply', id: 'yes', text: 'Yes' },
      { type: 'url', text: 'Site', url: 'https://ex.com' },
      { type: 'call', text: 'Call', phone: '5511999999999' },
    ],
  })
  const record = lastSent(s)
  assert.is(record.via, 'relayMessage')
  if (record.via !== 'relayMessage') return
  assert.is(record.jid, BOB_JID)
  assert.equal(record.options, {
    messageId: sent.id,
    additionalNodes: [
      { tag: 'biz', attrs: {}, content: [{ tag: 'interactive', attrs: { type: 'native_flow', v: '1' }, content: [{ tag: 'native_flow', attrs: { v: '9', name: 'mixed' } }] }] },
      { tag: 'bot', attrs: { biz_bot: '1' } },
    ],
  })
  const expected = proto.Message.create({
    viewOnceMessage: {
      message: {
        messageContextInfo: { deviceListMetadata: {}, deviceListMetadataVersion: 2 },
        interactiveMessage: {
          header: { title: 'Title', hasMediaAttachment: false },
          body: { text: 'Choose:' },
          footer: { text: 'footer' },
          nativeFlowMessage: {
            messageParamsJson: '',
            buttons: [
              { name: 'quick_reply', buttonParamsJson: JSON.stringify({ display_text: 'Yes', id: 'yes' }) },
              { name: 'cta_url', buttonParamsJson: JSON.stringify({ display_text: 'Site', url: 'https://ex.com', merchant_url: 'https://ex.com' }) },
              { name: 'cta_call', buttonParamsJson: JSON.stringify({ display_text: 'Call', phone_number: '+5511999999999' }) },
            ],
          },
        },
      },
    },
  })
  assert.equal(proto.Message.toObject(proto.Message.fromObject(record.message)), proto.Message.toObject(expected))
  const stored = await s.storage.get<{ content?: string }>(`device:dev:msg:${sent.id}`)
  assert.ok(stored?.content, 'the content is kept for retries (getMessage)')
  const retried = await s.fake.current('dev').config.getMessage!({ remoteJid: BOB_JID, id: sent.id, fromMe: true })
  assert.is(retried?.viewOnceMessage?.message?.interactiveMessage?.body?.text, 'Choose:')
  await s.transport.stop()
})

send('buttons to a group: the biz node only, no bot node', async () => {
  const s = await open()
  await s.transport.send('dev', GROUP, { kind: 'buttons', text: 'Vote', buttons: [{ type: 'reply', id: 'a', text: 'A' }] })
  const record = lastSent(s)
  assert.is(record.via === 'relayMessage' && record.jid, GROUP)
  const nodes = record.via === 'relayMessage' ? (record.options.additionalNodes ?? []) : []
  assert.equal(nodes.map(n => n.tag), ['biz'])
  await s.transport.stop()
})

send('carousel: cards with their uploaded images, in the same envelope', async () => {
  const s = await open()
  await s.transport.send('dev', BOB, {
    kind: 'carousel',
    text: 'Our picks',
    footer: 'shop',
    cards: [
      { image: { data: png, mimetype: 'image/png' }, title: 'One', subtitle: 'sub', description: 'first', buttons: [{ type: 'url', text: 'Buy', url: 'https://ex.com/1' }] },
      { image: { data: png, mimetype: 'image/png' }, title: 'Two', buttons: [{ type: 'reply', id: 'two', text: 'Want' }] },
    ],
  })
  const socket = s.fake.current('dev')
  assert.is(socket.calls.filter(c => c.method === 'waUploadToServer').length, 2)
  const record = lastSent(s)
  if (record.via !== 'relayMessage') return assert.unreachable('relayed')
  assert.equal(record.options.additionalNodes?.map(n => n.tag), ['biz', 'bot'])
  const interactive = record.message.viewOnceMessage!.message!.interactiveMessage!
  assert.equal(record.message.viewOnceMessage!.message!.messageContextInfo, { deviceListMetadata: {}, deviceListMetadataVersion: 2 })
  assert.is(interactive.body?.text, 'Our picks')
  assert.is(interactive.footer?.text, 'shop')
  const cards = interactive.carouselMessage!.cards!
  assert.is(interactive.carouselMessage!.messageVersion, 1)
  assert.is(cards.length, 2)
  assert.is(cards[0].header?.title, 'One')
  assert.is(cards[0].header?.subtitle, 'sub')
  assert.is(cards[0].header?.hasMediaAttachment, true)
  assert.is(cards[0].header?.imageMessage?.directPath, '/v/t62/fake-image')
  assert.is(cards[0].header?.imageMessage?.mimetype, 'image/png')
  assert.is(cards[0].body?.text, 'first')
  assert.equal(cards[0].nativeFlowMessage?.buttons, [{ name: 'cta_url', buttonParamsJson: JSON.stringify({ display_text: 'Buy', url: 'https://ex.com/1', merchant_url: 'https://ex.com/1' }) }])
  assert.equal(cards[1].nativeFlowMessage?.buttons, [{ name: 'quick_reply', buttonParamsJson: JSON.stringify({ display_text: 'Want', id: 'two' }) }])
  await s.transport.stop()
})

send("buttonsFallback 'text': buttons and carousels go out as numbered plain text", async () => {
  const s = await open({ buttonsFallback: 'text' })
  await s.transport.send('dev', BOB, {
    kind: 'buttons',
    header: 'Menu',
    text: 'Choose:',
    footer: 'bye',
    buttons: [
      { type: 'reply', id: 'y', text: 'Yes' },
      { type: 'url', text: 'Site', url: 'https://ex.com' },
      { type: 'call', text: 'Call us', phone: '5511999999999' },
    ],
  })
  assert.equal((lastSent(s) as { content: object }).content, { text: '*Menu*\nChoose:\n\n1. Yes\n2. Site: https://ex.com\n3. Call us: +5511999999999\n\n_bye_' })
  await s.transport.send('dev', BOB, {
    kind: 'carousel',
    text: 'Picks',
    cards: [
      { image: { data: png, mimetype: 'image/png' }, title: 'One', description: 'first', buttons: [{ type: 'url', text: 'Buy', url: 'https://ex.com/1' }] },
      { image: { data: png, mimetype: 'image/png' }, title: 'Two', subtitle: 'second', buttons: [{ type: 'reply', id: 't', text: 'Want' }] },
    ],
  })
  assert.equal((lastSent(s) as { content: object }).content, { text: 'Picks\n\n*1. One*\nfirst\n- Buy: https://ex.com/1\n\n*2. Two*\nsecond\n- Want' })
  assert.is(s.fake.sent('dev').filter(r => r.via === 'relayMessage').length, 0)
  await s.transport.stop()
})

send('phone numbers resolve with onWhatsApp once (cached); JIDs pass through without a lookup', async () => {
  const s = await open()
  const socket = s.fake.current('dev')
  await s.transport.send('dev', '+55 (11) 98888-8000', { kind: 'text', text: '1' })
  await s.transport.send('dev', '5511988888000', { kind: 'text', text: '2' })
  assert.equal(socket.calls.filter(c => c.method === 'onWhatsApp').map(c => c.args), [['5511988888000']])
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
  const lookups = s.fake.current('dev').calls.filter(c => c.method === 'onWhatsApp').map(c => c.args[0])
  assert.equal(lookups, ['5511977776666', '5521988887777', '552188887777', '556188887777', '5561988887777'])
  await s.transport.stop()
})

send('a number not on WhatsApp is not-found (and the miss is cached)', async () => {
  const s = await open()
  s.fake.notOnWhatsApp.add('15550001111')
  await fails(s.transport.send('dev', '15550001111', { kind: 'text', text: 'x' }), 'not-found')
  await fails(s.transport.send('dev', '15550001111', { kind: 'text', text: 'x' }), 'not-found')
  assert.is(s.fake.current('dev').calls.filter(c => c.method === 'onWhatsApp').length, 1)
  await s.transport.stop()
})

send('read receipts: readMessages with the key as received, participant in groups', async () => {
  const s = await open()
  const direct = waMessage({ chat: '555@lid', remoteJidAlt: BOB_JID, message: { conversation: 'hi' } })
  const inGroup = waMessage({ chat: GROUP, participant: '777@lid', participantAlt: BOB_JID, message: { conversation: 'hey' } })
  await s.fake.deliver('dev', [direct, inGroup])
  await s.transport.markRead('dev', { chat: BOB, id: direct.key.id! })
  await s.transport.markRead('dev', { chat: GROUP, id: inGroup.key.id! })
  const reads = s.fake.current('dev').calls.filter(c => c.method === 'readMessages').map(c => c.args[0])
  assert.equal(reads, [
    [{ remoteJid: '555@lid', fromMe: false, id: direct.key.id }],
    [{ remoteJid: GROUP, fromMe: false, id: inGroup.key.id, participant: '777@lid' }],
  ])
  await s.transport.stop()
})

send('read receipts for unknown or own messages are not-found', async () => {
  const s = await open()
  const sent = await s.transport.send('dev', BOB, { kind: 'text', text: 'mine' })
  await fails(s.transport.markRead('dev', { chat: BOB, id: 'UNKNOWN' }), 'not-found')
  await fails(s.transport.markRead('dev', { chat: BOB, id: sent.id }), 'not-found')
  await s.transport.stop()
})

send('errors: not connected, rate-overlimit, closed socket, stalled send, refused content', async () => {
  const s = await open({ sendTimeoutMs: 50 })
  await fails(s.transport.send('other', BOB, { kind: 'text', text: 'x' }), 'not-connected')
  await fails(s.transport.markRead('other', { chat: BOB, id: 'X' }), 'not-connected')
  s.fake.failNext('sendMessage', new Boom('rate-overlimit', { data: 429 }))
  await fails(s.transport.send('dev', BOB, { kind: 'text', text: 'x' }), 'rate-limited')
  s.fake.failNext('sendMessage', new Boom('Connection Closed', { statusCode: 428 }))
  await fails(s.transport.send('dev', BOB, { kind: 'text', text: 'x' }), 'not-connected')
  s.fake.failNext('relayMessage', new Boom('Timed Out', { statusCode: 408 }))
  await fails(s.transport.send('dev', BOB, { kind: 'buttons', text: 'x', buttons: [{ type: 'reply', id: 'a', text: 'A' }] }), 'timeout')
  s.fake.failNext('sendMessage', new Boom('bad-request', { data: 400 }))
  await fails(s.transport.send('dev', BOB, { kind: 'text', text: 'x' }), 'invalid')
  s.fake.failNext('sendMessage', new Error('something else'))
  await fails(s.transport.send('dev', BOB, { kind: 'text', text: 'x' }), 'failed')
  s.fake.hanging.add('sendMessage')
  await fails(s.transport.send('dev', BOB, { kind: 'text', text: 'x' }), 'timeout')
  s.fake.hanging.delete('sendMessage')
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
  for (const message of bad) await fails(s.transport.send('dev', BOB, message as OutgoingMessage), 'invalid')
  assert.equal(s.fake.sent('dev'), [])
  await fails(s.transport.send('dev', 'not-a-number', { kind: 'text', text: 'x' }), 'invalid')
  await fails(s.transport.send('dev', 'x@newsletter', { kind: 'text', text: 'x' }), 'invalid')
  await s.transport.stop()
})

send('own sends echoed back by the socket are not reported as received', async () => {
  const s = await open()
  const sent = await s.transport.send('dev', BOB, { kind: 'text', text: 'mine' })
  await s.fake.deliver('dev', waMessage({ chat: BOB_JID, fromMe: true, id: sent.id, message: { conversation: 'mine' } }), 'append')
  assert.equal(s.messages('dev'), [])
  await s.transport.stop()
})

send('a stalled send marks the open session in its status reason until a send succeeds', async () => {
  const s = await open({ sendTimeoutMs: 30 })
  s.fake.hanging.add('sendMessage')
  await fails(s.transport.send('dev', BOB, { kind: 'text', text: 'x' }), 'timeout')
  assert.equal(await s.transport.status('dev'), { state: 'open', connected: true, phone: ME, lid: '11112222@lid', reason: 'stalled: a send timed out' })
  assert.is(s.statuses('dev').at(-1)?.reason, 'stalled: a send timed out')
  s.fake.hanging.delete('sendMessage')
  await s.transport.send('dev', BOB, { kind: 'text', text: 'y' })
  assert.equal(s.statuses('dev').at(-1), { state: 'open', connected: true, phone: ME, lid: '11112222@lid' })
  await s.transport.stop()
})

send.run()
