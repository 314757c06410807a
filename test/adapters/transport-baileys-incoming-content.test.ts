import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { proto } from '@whiskeysockets/baileys'
import type { IncomingContent } from '../../src/ports/transport.ts'
import { linkedBaileys } from '../helpers/baileys-setup.ts'
import { BOB_JID, BOB_LID, GROUP, waMessage } from '../helpers/baileys-fixtures.ts'

const content = suite('Baileys transport: what each kind of incoming message becomes')

/** The content the gateway reports for one message from Bob. */
async function contentOf(message: proto.IMessage): Promise<IncomingContent | undefined> {
  const s = await linkedBaileys({ inlineMediaMaxBytes: 0 })
  await s.fake.deliver('dev', waMessage({ chat: BOB_JID, message }))
  await s.transport.stop()
  return s.messages('dev')[0]?.content
}

const cases: [string, proto.IMessage, IncomingContent | undefined][] = [
  ['conversation', { conversation: 'oi' }, { kind: 'text', text: 'oi' }],
  ['extendedTextMessage', { extendedTextMessage: { text: 'link https://x.y' } }, { kind: 'text', text: 'link https://x.y' }],
  ['ephemeral wrapper', { ephemeralMessage: { message: { conversation: 'secret' } } }, { kind: 'text', text: 'secret' }],
  ['imageMessage', { imageMessage: { mimetype: 'image/jpeg', caption: 'pic', fileLength: 3 } }, { kind: 'image', mimetype: 'image/jpeg', caption: 'pic' }],
  ['view-once image', { viewOnceMessageV2: { message: { imageMessage: { mimetype: 'image/jpeg' } } } }, { kind: 'image', mimetype: 'image/jpeg' }],
  ['videoMessage', { videoMessage: { mimetype: 'video/mp4', caption: 'clip' } }, { kind: 'video', mimetype: 'video/mp4', caption: 'clip' }],
  ['ptvMessage (video note)', { ptvMessage: { mimetype: 'video/mp4' } }, { kind: 'video', mimetype: 'video/mp4' }],
  ['audioMessage', { audioMessage: { mimetype: 'audio/mpeg' } }, { kind: 'audio', mimetype: 'audio/mpeg' }],
  ['voice note', { audioMessage: { mimetype: 'audio/ogg; codecs=opus', ptt: true } }, { kind: 'audio', mimetype: 'audio/ogg; codecs=opus', voiceNote: true }],
  [
    'documentMessage',
    { documentMessage: { mimetype: 'application/pdf', fileName: 'nota.pdf' } },
    { kind: 'document', mimetype: 'application/pdf', fileName: 'nota.pdf' },
  ],
  [
    'document with caption',
    { documentWithCaptionMessage: { message: { documentMessage: { mimetype: 'application/pdf', fileName: 'a.pdf', caption: 'see' } } } },
    { kind: 'document', mimetype: 'application/pdf', fileName: 'a.pdf', caption: 'see' },
  ],
  [
    'contactMessage',
    { contactMessage: { displayName: 'Ana', vcard: 'BEGIN:VCARD\nVERSION:3.0\nFN:Ana\nTEL;type=CELL;waid=5511977770000:+55 11 97777-0000\nEND:VCARD' } },
    {
      kind: 'contact',
      name: 'Ana',
      phone: '5511977770000',
      vcard: 'BEGIN:VCARD\nVERSION:3.0\nFN:Ana\nTEL;type=CELL;waid=5511977770000:+55 11 97777-0000\nEND:VCARD',
    },
  ],
  [
    'contact without waid',
    { contactMessage: { vcard: 'BEGIN:VCARD\nFN:Zé\nTEL;type=CELL:+55 21 3333-4444\nEND:VCARD' } },
    { kind: 'contact', name: 'Zé', phone: '552133334444', vcard: 'BEGIN:VCARD\nFN:Zé\nTEL;type=CELL:+55 21 3333-4444\nEND:VCARD' },
  ],
  [
    'contact whose TEL is grouped (item1.TEL, as iPhones write it) and has no waid',
    {
      contactMessage: {
        displayName: 'Ana',
        vcard: 'BEGIN:VCARD\nVERSION:3.0\nFN:Ana\nitem1.TEL;type=CELL:+55 11 97777-0000\nitem1.X-ABLabel:Celular\nEND:VCARD',
      },
    },
    {
      kind: 'contact',
      name: 'Ana',
      phone: '5511977770000',
      vcard: 'BEGIN:VCARD\nVERSION:3.0\nFN:Ana\nitem1.TEL;type=CELL:+55 11 97777-0000\nitem1.X-ABLabel:Celular\nEND:VCARD',
    },
  ],
  [
    'contactsArrayMessage (the first contact, and every one in contacts)',
    {
      contactsArrayMessage: {
        displayName: '2 contacts',
        contacts: [
          { displayName: 'A', vcard: 'TEL;waid=111:+111' },
          { displayName: 'B', vcard: 'x' },
        ],
      },
    },
    {
      kind: 'contact',
      name: 'A',
      phone: '111',
      vcard: 'TEL;waid=111:+111',
      contacts: [
        { name: 'A', phone: '111', vcard: 'TEL;waid=111:+111' },
        { name: 'B', vcard: 'x' },
      ],
    },
  ],
  [
    'contactsArrayMessage of one contact (no contacts list)',
    { contactsArrayMessage: { displayName: '1 contact', contacts: [{ displayName: 'A', vcard: 'TEL;waid=111:+111' }] } },
    { kind: 'contact', name: 'A', phone: '111', vcard: 'TEL;waid=111:+111' },
  ],
  [
    'locationMessage',
    { locationMessage: { degreesLatitude: -23.5, degreesLongitude: -46.6, name: 'Paulista' } },
    { kind: 'location', latitude: -23.5, longitude: -46.6, name: 'Paulista' },
  ],
  ['liveLocationMessage', { liveLocationMessage: { degreesLatitude: 1.5, degreesLongitude: 2.5 } }, { kind: 'location', latitude: 1.5, longitude: 2.5 }],
  [
    'reactionMessage',
    { reactionMessage: { key: { remoteJid: BOB_JID, fromMe: true, id: 'TARGET' }, text: '❤️' } },
    { kind: 'reaction', target: 'TARGET', emoji: '❤️' },
  ],
  [
    'reaction removed',
    { reactionMessage: { key: { remoteJid: BOB_JID, fromMe: true, id: 'TARGET' }, text: '' } },
    { kind: 'reaction', target: 'TARGET', emoji: '' },
  ],
  [
    'protocolMessage REVOKE',
    { protocolMessage: { type: proto.Message.ProtocolMessage.Type.REVOKE, key: { remoteJid: BOB_JID, id: 'GONE' } } },
    { kind: 'delete', target: 'GONE' },
  ],
  ['protocolMessage edit (not reported)', { protocolMessage: { type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT, key: { id: 'X' } } }, undefined],
  [
    'buttonsResponseMessage',
    { buttonsResponseMessage: { selectedButtonId: 'yes', selectedDisplayText: 'Yes', contextInfo: { stanzaId: 'BTNMSG' } } },
    { kind: 'button', target: 'BTNMSG', buttonId: 'yes', text: 'Yes', list: false },
  ],
  [
    'templateButtonReplyMessage',
    { templateButtonReplyMessage: { selectedId: 'opt1', selectedDisplayText: 'Option 1', contextInfo: { stanzaId: 'TPL' } } },
    { kind: 'button', target: 'TPL', buttonId: 'opt1', text: 'Option 1', list: false },
  ],
  [
    'listResponseMessage',
    { listResponseMessage: { title: 'Row A', singleSelectReply: { selectedRowId: 'row-a' }, contextInfo: { stanzaId: 'LIST' } } },
    { kind: 'button', target: 'LIST', buttonId: 'row-a', text: 'Row A', list: true },
  ],
  [
    'interactiveResponseMessage (native flow tap)',
    {
      interactiveResponseMessage: {
        body: { text: 'Yes' },
        nativeFlowResponseMessage: { name: 'quick_reply', paramsJson: JSON.stringify({ id: 'yes' }), version: 3 },
        contextInfo: { stanzaId: 'CAROUSEL' },
      },
    },
    { kind: 'button', target: 'CAROUSEL', buttonId: 'yes', text: 'Yes', list: false },
  ],
  [
    'interactiveResponseMessage single_select',
    { interactiveResponseMessage: { body: { text: 'B' }, nativeFlowResponseMessage: { name: 'single_select', paramsJson: '{"id":"b"}' } } },
    { kind: 'button', buttonId: 'b', text: 'B', list: true },
  ],
  // docs/api.md: content another client merely wraps in a viewOnceMessage (some bots send their buttons so) is unwrapped and reported.
  [
    'buttons a bot sent wrapped in viewOnceMessage (interactiveMessage): their text',
    {
      viewOnceMessage: {
        message: {
          messageContextInfo: { deviceListMetadataVersion: 2 },
          interactiveMessage: {
            body: { text: 'Escolha uma opção' },
            footer: { text: 'loja' },
            nativeFlowMessage: { buttons: [{ name: 'quick_reply', buttonParamsJson: '{"display_text":"Sim","id":"s"}' }] },
          },
        },
      },
    },
    { kind: 'text', text: 'Escolha uma opção' },
  ],
  [
    'buttonsMessage wrapped in viewOnceMessage: its text',
    {
      viewOnceMessage: { message: { buttonsMessage: { contentText: 'Confirma?', buttons: [{ buttonId: 'y', buttonText: { displayText: 'Sim' }, type: 1 }] } } },
    },
    { kind: 'text', text: 'Confirma?' },
  ],
  [
    'listMessage: its description',
    { listMessage: { title: 'Menu', description: 'Veja o cardápio', buttonText: 'Abrir', listType: 1, sections: [{ rows: [{ title: 'A', rowId: 'a' }] }] } },
    { kind: 'text', text: 'Veja o cardápio' },
  ],
  [
    'templateMessage: its text',
    {
      templateMessage: { hydratedTemplate: { hydratedContentText: 'Pedido pronto', hydratedButtons: [{ quickReplyButton: { displayText: 'Ok', id: 'ok' } }] } },
    },
    { kind: 'text', text: 'Pedido pronto' },
  ],
  ['stickerMessage (not reported)', { stickerMessage: { mimetype: 'image/webp' } }, undefined],
  ['pollCreationMessage (not reported)', { pollCreationMessage: { name: 'poll' } }, undefined],
]

for (const [name, message, expected] of cases) {
  content(`${name} becomes ${expected ? expected.kind : 'nothing'}`, async () => {
    assert.equal(await contentOf(message), expected)
  })
}

content('a status posted to a group (groupStatusMessage, V2, in a disappearing group too) is skipped, as statuses are', async () => {
  // Baileys' normalizeMessageContent unwraps these as it unwraps ephemeral and view-once messages.
  const s = await linkedBaileys({ inlineMediaMaxBytes: 0 })
  const image = { imageMessage: { mimetype: 'image/jpeg', caption: 'my status' } }
  await s.fake.deliver('dev', [
    waMessage({ chat: GROUP, participant: BOB_LID, participantAlt: BOB_JID, message: { groupStatusMessageV2: { message: { conversation: 'my status' } } } }),
    waMessage({ chat: GROUP, participant: BOB_JID, message: { groupStatusMessage: { message: image } } }),
    waMessage({ chat: GROUP, participant: BOB_JID, message: { ephemeralMessage: { message: { groupStatusMessageV2: { message: image } } } } }),
    waMessage({ chat: GROUP, participant: BOB_JID, message: { conversation: 'an ordinary group message' } }),
  ])
  assert.equal(
    s.messages('dev').map(m => m.content),
    [{ kind: 'text', text: 'an ordinary group message' }],
  )
  await s.transport.stop()
})

content.run()
