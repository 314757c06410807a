import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { proto, type BinaryNode } from '@whiskeysockets/baileys'
import type { OutgoingMessage } from '../../src/ports/transport.ts'
import { linkedBaileys } from '../helpers/baileys-setup.ts'
import { BOB, BOB_JID, GROUP } from '../helpers/baileys-fixtures.ts'
import type { SentRecord } from '../helpers/fake-baileys/index.ts'
import { transportRejection } from '../helpers/transport-errors.ts'

const interactive = suite('Baileys transport: buttons and carousels as a phone renders them')

const png = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5f5b3a90000000049454e44ae426082',
  'hex',
)

function lastRelay(s: { fake: { sent(id: string): SentRecord[] } }): Extract<SentRecord, { via: 'relayMessage' }> {
  const record = s.fake.sent('dev').at(-1)
  if (record?.via !== 'relayMessage') throw new Error(`expected a relayMessage, got ${record?.via}`)
  return record
}

/** The biz node current clients send: privacy attributes, the native flow named `mixed`, quality control. */
function assertBizNode(nodes: BinaryNode[] | undefined): void {
  assert.is(nodes?.length, 1, 'one node: biz (no <bot biz_bot="1">, which gets the message labelled as AI)')
  const [biz] = nodes!
  assert.is(biz.tag, 'biz')
  assert.is(biz.attrs.actual_actors, '2')
  assert.is(biz.attrs.host_storage, '2')
  assert.ok(Math.abs(Number(biz.attrs.privacy_mode_ts) - Date.now() / 1000) < 60, `privacy_mode_ts ${biz.attrs.privacy_mode_ts} is now, in seconds`)
  assert.equal(biz.content, [
    { tag: 'interactive', attrs: { type: 'native_flow', v: '1' }, content: [{ tag: 'native_flow', attrs: { v: '9', name: 'mixed' } }] },
    { tag: 'quality_control', attrs: { source_type: 'third_party' } },
  ])
}

interactive(
  'buttons: a bare interactiveMessage (no viewOnce wrapper) through relayMessage with the biz node, mixed reply/url/call buttons allowed',
  async () => {
    const s = await linkedBaileys()
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
    const record = lastRelay(s)
    assert.is(record.jid, BOB_JID)
    assert.is(record.options.messageId, sent.id)
    assertBizNode(record.options.additionalNodes)
    const expected = proto.Message.create({
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
    })
    assert.equal(proto.Message.toObject(proto.Message.fromObject(record.message)), proto.Message.toObject(expected))
    assert.not.ok(record.message.viewOnceMessage, 'WhatsApp Web and Desktop drop the buttons of a view-once bubble')
    const retried = await s.fake.current('dev').config.getMessage!({ remoteJid: BOB_JID, id: sent.id, fromMe: true })
    assert.is(retried?.interactiveMessage?.body?.text, 'Choose:', 'the content is kept for retries (getMessage)')
    await s.transport.stop()
  },
)

interactive('buttons to a group carry the same biz node (and never a bot node)', async () => {
  const s = await linkedBaileys()
  s.fake.addGroup({ id: GROUP, subject: 'G', members: [{ phone: '5511999990000' }, { phone: BOB }] })
  await s.transport.send('dev', GROUP, { kind: 'buttons', text: 'Vote', buttons: [{ type: 'reply', id: 'a', text: 'A' }] })
  const record = lastRelay(s)
  assert.is(record.jid, GROUP)
  assertBizNode(record.options.additionalNodes)
  await s.transport.stop()
})

interactive('carousel: cards with their uploaded images in a bare interactiveMessage, with the biz node', async () => {
  const s = await linkedBaileys()
  await s.transport.send('dev', BOB, {
    kind: 'carousel',
    text: 'Our picks',
    footer: 'shop',
    cards: [
      {
        image: { data: png, mimetype: 'image/png' },
        title: 'One',
        subtitle: 'sub',
        description: 'first',
        buttons: [{ type: 'url', text: 'Buy', url: 'https://ex.com/1' }],
      },
      { image: { data: png, mimetype: 'image/png' }, title: 'Two', buttons: [{ type: 'reply', id: 'two', text: 'Want' }] },
    ],
  })
  assert.is(s.fake.current('dev').calls.filter(c => c.method === 'waUploadToServer').length, 2)
  const record = lastRelay(s)
  assertBizNode(record.options.additionalNodes)
  assert.not.ok(record.message.viewOnceMessage)
  const message = record.message.interactiveMessage!
  assert.is(message.body?.text, 'Our picks')
  assert.is(message.footer?.text, 'shop')
  const cards = message.carouselMessage!.cards!
  assert.is(message.carouselMessage!.messageVersion, 1)
  assert.is(cards.length, 2)
  assert.is(cards[0].header?.title, 'One')
  assert.is(cards[0].header?.subtitle, 'sub')
  assert.is(cards[0].header?.hasMediaAttachment, true)
  assert.is(cards[0].header?.imageMessage?.directPath, '/v/t62/fake-image')
  assert.is(cards[0].header?.imageMessage?.mimetype, 'image/png')
  assert.is(cards[0].body?.text, 'first')
  assert.equal(cards[0].nativeFlowMessage?.buttons, [
    { name: 'cta_url', buttonParamsJson: JSON.stringify({ display_text: 'Buy', url: 'https://ex.com/1', merchant_url: 'https://ex.com/1' }) },
  ])
  assert.equal(cards[1].nativeFlowMessage?.buttons, [{ name: 'quick_reply', buttonParamsJson: JSON.stringify({ display_text: 'Want', id: 'two' }) }])
  await s.transport.stop()
})

interactive('more than three buttons on a message or a card is refused (a phone shows three); nothing reaches the network', async () => {
  const s = await linkedBaileys()
  const four = [1, 2, 3, 4].map(n => ({ type: 'reply' as const, id: `b${n}`, text: `B${n}` }))
  assert.match(
    (await transportRejection(s.transport.send('dev', BOB, { kind: 'buttons', text: 'x', buttons: four }), 'invalid')).message,
    /at most 3 buttons on a message/,
  )
  const card = { image: { data: png, mimetype: 'image/png' }, title: 'C', buttons: four }
  assert.match(
    (await transportRejection(s.transport.send('dev', BOB, { kind: 'carousel', text: 'x', cards: [card] }), 'invalid')).message,
    /at most 3 buttons on a carousel card/,
  )
  assert.equal(s.fake.sent('dev'), [])
  assert.is(s.fake.current('dev').calls.filter(c => c.method === 'waUploadToServer').length, 0, 'no card image uploaded either')
  await s.transport.stop()
})

interactive("buttonsFallback 'text': buttons and carousels go out as numbered plain text, any number of buttons", async () => {
  const s = await linkedBaileys({ buttonsFallback: 'text' })
  const message: OutgoingMessage = {
    kind: 'buttons',
    header: 'Menu',
    text: 'Choose:',
    footer: 'bye',
    buttons: [
      { type: 'reply', id: 'y', text: 'Yes' },
      { type: 'url', text: 'Site', url: 'https://ex.com' },
      { type: 'call', text: 'Call us', phone: '5511999999999' },
      { type: 'reply', id: 'n', text: 'No' },
    ],
  }
  await s.transport.send('dev', BOB, message)
  assert.equal((s.fake.sent('dev').at(-1) as { content: object }).content, {
    text: '*Menu*\nChoose:\n\n1. Yes\n2. Site: https://ex.com\n3. Call us: +5511999999999\n4. No\n\n_bye_',
    linkPreview: null,
  })
  await s.transport.send('dev', BOB, {
    kind: 'carousel',
    text: 'Picks',
    cards: [
      { image: { data: png, mimetype: 'image/png' }, title: 'One', description: 'first', buttons: [{ type: 'url', text: 'Buy', url: 'https://ex.com/1' }] },
      { image: { data: png, mimetype: 'image/png' }, title: 'Two', subtitle: 'second', buttons: [{ type: 'reply', id: 't', text: 'Want' }] },
    ],
  })
  assert.equal((s.fake.sent('dev').at(-1) as { content: object }).content, {
    text: 'Picks\n\n*1. One*\nfirst\n- Buy: https://ex.com/1\n\n*2. Two*\nsecond\n- Want',
    linkPreview: null,
  })
  assert.is(s.fake.sent('dev').filter(r => r.via === 'relayMessage').length, 0)
  await s.transport.stop()
})

interactive.run()
