import assert from 'node:assert/strict'
import { assertOk } from '../messaging.ts'
import { MP4, OPUS, PDF, PNG } from '../samples.ts'
import { pick } from './sends.ts'
import type { Case } from './suite.ts'
import { arrived, FRIEND, hooks, phoneSends, send, SHOP } from './world.ts'

/** The ten webhook kinds, each from what a phone sends to the device. */
export function webhookCases(test: Case): void {
  test('webhook Texto: the sender, its name, the device and the text', async world => {
    const id = await phoneSends(world, { from: FRIEND, to: SHOP, type: 'text', text: 'Quero um orçamento' })
    const [hook] = await hooks(world, [id])
    assert.deepEqual(pick(hook, ['event', 'idMessagem', 'device', 'chat', 'from', 'pushName', 'to', 'fromMe', 'isGroup', 'text']), {
      event: 'Texto',
      idMessagem: id,
      device: world.deviceId,
      chat: FRIEND,
      from: FRIEND,
      pushName: 'Amiga',
      to: SHOP,
      fromMe: false,
      isGroup: false,
      text: 'Quero um orçamento',
    })
    assert.equal(typeof hook.timestamp, 'number')
  })

  test("webhook Texto of the device's own text sent through the API: from its number, fromLid its LID (docs/api.md, Payload), as for a text its phone sends", async world => {
    const id = assertOk(await send(world, { to: FRIEND, message: 'Enviado pela API' })).id
    const [hook] = await hooks(world, [id])
    assert.deepEqual(pick(hook, ['event', 'idMessagem', 'chat', 'from', 'fromLid', 'to', 'fromMe', 'isGroup', 'text']), {
      event: 'Texto',
      idMessagem: id,
      chat: FRIEND,
      from: SHOP,
      fromLid: world.shopLid,
      to: FRIEND,
      fromMe: true,
      isGroup: false,
      text: 'Enviado pela API',
    })
  })

  test('webhooks Imagem, Vídeo, Áudio and Documento: the bytes the phone sent, with caption, file name, mimetype and voice note', async world => {
    const media = [
      { type: 'image', base64: PNG.toString('base64'), mimetype: 'image/png', caption: 'Olha isso' },
      { type: 'video', base64: MP4.toString('base64'), mimetype: 'video/mp4', caption: 'Vídeo' },
      { type: 'audio', base64: OPUS.toString('base64'), mimetype: 'audio/ogg; codecs=opus', voiceNote: true },
      { type: 'document', base64: PDF.toString('base64'), mimetype: 'application/pdf', fileName: 'nota.pdf', caption: 'Nota' },
    ]
    const ids: string[] = []
    for (const m of media) ids.push(await phoneSends(world, { from: FRIEND, to: SHOP, ...m }))
    const got = await hooks(world, ids)
    assert.deepEqual(
      got.map(h => pick(h, ['event', 'from', 'caption', 'fileName', 'mimetype', 'base64', 'voiceNote'])),
      [
        { event: 'Imagem', from: FRIEND, caption: 'Olha isso', mimetype: 'image/png', base64: media[0].base64 },
        { event: 'Vídeo', from: FRIEND, caption: 'Vídeo', mimetype: 'video/mp4', base64: media[1].base64 },
        { event: 'Áudio', from: FRIEND, mimetype: 'audio/ogg; codecs=opus', base64: media[2].base64, voiceNote: true },
        { event: 'Documento', from: FRIEND, caption: 'Nota', fileName: 'nota.pdf', mimetype: 'application/pdf', base64: media[3].base64 },
      ],
    )
  })

  test('webhooks Contato, Localização, Reação and Deletada', async world => {
    const mine = assertOk(await send(world, { to: FRIEND, message: 'Pode reagir' })).id
    await arrived(world, FRIEND, mine)
    const own = await phoneSends(world, { from: FRIEND, to: SHOP, type: 'text', text: 'apagar' })
    const ids = [
      await phoneSends(world, { from: FRIEND, to: SHOP, type: 'contact', name: 'Maria', phone: '5511966660004' }),
      await phoneSends(world, { from: FRIEND, to: SHOP, type: 'location', latitude: -23.5, longitude: -46.6, name: 'Loja' }),
      await phoneSends(world, { from: FRIEND, to: SHOP, type: 'reaction', target: mine, emoji: '👍' }),
      await phoneSends(world, { from: FRIEND, to: SHOP, type: 'delete', target: own }),
    ]
    const [contact, location, reaction, deleted] = await hooks(world, ids)
    assert.deepEqual(pick(contact, ['event', 'name', 'phone']), { event: 'Contato', name: 'Maria', phone: '5511966660004' })
    assert.deepEqual(pick(location, ['event', 'latitude', 'longitude', 'name', 'mapUrl']), {
      event: 'Localização',
      latitude: -23.5,
      longitude: -46.6,
      name: 'Loja',
      mapUrl: 'https://www.google.com/maps?q=-23.5,-46.6',
    })
    assert.deepEqual(pick(reaction, ['event', 'emoji', 'removed', 'target']), { event: 'Reação', emoji: '👍', removed: false, target: mine })
    assert.deepEqual(pick(deleted, ['event', 'target']), { event: 'Deletada', target: own })
  })

  test('webhook Contato: the phone is the number of the card, whatever its name says (a name with waid=)', async world => {
    const id = await phoneSends(world, { from: FRIEND, to: SHOP, type: 'contact', name: 'Zé (waid=123)', phone: '5511966660004' })
    const [contact] = await hooks(world, [id])
    assert.deepEqual(pick(contact, ['event', 'name', 'phone']), { event: 'Contato', name: 'Zé (waid=123)', phone: '5511966660004' })
  })

  test('webhook Contato: a name with line breaks, commas and semicolons is written escaped in the vCard, and adds no phone to it', async world => {
    const name = 'Loja; Centro, SP\nTEL;waid=999:+999'
    const id = await phoneSends(world, { from: FRIEND, to: SHOP, type: 'contact', name, phone: '5511966660004' })
    const [contact] = await hooks(world, [id])
    assert.deepEqual(pick(contact, ['event', 'name', 'phone', 'vcard']), {
      event: 'Contato',
      name,
      phone: '5511966660004',
      vcard: 'BEGIN:VCARD\nVERSION:3.0\nFN:Loja\\; Centro\\, SP\\nTEL\\;waid=999:+999\nTEL;type=CELL;waid=5511966660004:+5511966660004\nEND:VCARD',
    })
  })

  test('webhooks Botão and Lista: a tap on a button and on a list row of the buttons the device sent', async world => {
    const buttons = [
      { type: 'replyButton', displaytext: 'Pedido', id: 'pedido' },
      { type: 'replyButton', displaytext: 'Suporte', id: 'suporte' },
    ]
    const sent = assertOk(await send(world, { to: FRIEND, message: 'Como ajudar?', buttons })).id
    await arrived(world, FRIEND, sent)
    const ids = [
      await phoneSends(world, { from: FRIEND, to: SHOP, type: 'button', target: sent, buttonId: 'pedido', text: 'Pedido' }),
      await phoneSends(world, { from: FRIEND, to: SHOP, type: 'button', target: sent, buttonId: 'linha-2', text: 'Linha 2', list: true }),
    ]
    const [tap, row] = await hooks(world, ids)
    assert.deepEqual(pick(tap, ['event', 'buttonId', 'target', 'from']), { event: 'Botão', buttonId: 'pedido', target: sent, from: FRIEND })
    assert.deepEqual(pick(row, ['event', 'buttonId', 'target', 'from']), { event: 'Lista', buttonId: 'linha-2', target: sent, from: FRIEND })
  })

  test('last: the peer recorded no problem (nothing it could not decrypt or verify, no refused login) and no iq it does not know', async world => {
    const { problems, unknownIqs } = world.peer!.records
    assert.deepEqual(problems, [])
    assert.deepEqual(
      unknownIqs.map(iq => `${iq.attrs.xmlns} ${iq.attrs.type} ${(Array.isArray(iq.content) ? iq.content : []).map(c => c.tag).join(',')}`),
      [],
    )
  })
}
