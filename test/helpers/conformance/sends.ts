import assert from 'node:assert/strict'
import { fileServer } from '../file-server.ts'
import { assertError, assertOk } from '../messaging.ts'
import { JPEG, PDF, PNG } from '../samples.ts'
import type { Case } from './suite.ts'
import { arrived, FRIEND, send, SHOP } from './world.ts'

/** Operations 8 to 11, 15 and 16: what each send delivers to the phone, and one documented error each. */
export function sendCases(test: Case): void {
  test('operation 8: send text delivers exactly the text and answers the network message id; 401 for a to that is no phone', async world => {
    const body = assertOk(await send(world, { to: `+${FRIEND}`, message: 'Olá, tudo bem?' }))
    assert.equal(body.message, 'Mensagem de texto enviada.')
    assert.match(body.id, /^3EB0[0-9A-F]{16,}$/)
    assert.deepEqual(await arrived(world, FRIEND, body.id), { id: body.id, from: SHOP, type: 'text', text: 'Olá, tudo bem?' })
    assertError(await send(world, { to: 'abc', message: 'x' }), 401, 'validation.required')
  })

  test('operation 8: an appkey of another account is 404 Nenhum dispositivo encontrado.', async world => {
    assertError(await send(world, { appkey: 'ghost', to: FRIEND, message: 'x' }), 404, 'Nenhum dispositivo encontrado.')
  })

  test('operation 8: a LID no phone has (a recipient the device never met) is 404 Destino não encontrado na rede. (docs/api.md)', async world => {
    assertError(await send(world, { to: '987654321098765@lid', message: 'ninguém' }), 404, 'Destino não encontrado na rede.')
  })

  test('operation 9: send media delivers an image with its caption and a document with its name; 401 for bad base64', async world => {
    const image = assertOk(await send(world, { to: FRIEND, file: PNG.toString('base64'), message: 'foto.png', descricao: 'Nossa loja' }))
    assert.equal(image.message, 'Arquivo enviado.')
    const got = await arrived(world, FRIEND, image.id)
    assert.deepEqual(pick(got, ['id', 'from', 'type', 'caption', 'mimetype', 'bytes']), {
      id: image.id,
      from: SHOP,
      type: 'image',
      caption: 'Nossa loja',
      mimetype: 'image/png',
      bytes: PNG.length,
    })
    const document = assertOk(await send(world, { to: FRIEND, file: PDF.toString('base64'), message: 'nota.pdf', descricao: 'Sua nota' }))
    assert.deepEqual(pick(await arrived(world, FRIEND, document.id), ['type', 'fileName', 'caption', 'mimetype', 'bytes']), {
      type: 'document',
      fileName: 'nota.pdf',
      caption: 'Sua nota',
      mimetype: 'application/pdf',
      bytes: PDF.length,
    })
    assertError(await send(world, { to: FRIEND, file: 'not base64!', message: 'x.png' }), 401, 'validation.required')
  })

  test('operation 10: send contact delivers the card with the name and digits; 401 for a contact name over 256 characters', async world => {
    const body = assertOk(await send(world, { to: FRIEND, message: '+55 11 96666-0004', contact: 'Maria' }))
    assert.equal(body.message, 'Contato enviado.')
    assert.deepEqual(await arrived(world, FRIEND, body.id), { id: body.id, from: SHOP, type: 'contact', name: 'Maria', phone: '5511966660004' })
    assertError(await send(world, { to: FRIEND, message: '5511966660004', contact: 'x'.repeat(257) }), 401, 'validation.required')
  })

  test('operation 11: send location delivers the coordinates and the text; 401 for a latitude out of range', async world => {
    const body = assertOk(await send(world, { to: FRIEND, latitude: '-23.5505', longitude: '-46.6333', message: 'Nossa loja' }))
    assert.equal(body.message, 'Localização enviada.')
    assert.deepEqual(await arrived(world, FRIEND, body.id), {
      id: body.id,
      from: SHOP,
      type: 'location',
      latitude: -23.5505,
      longitude: -46.6333,
      text: 'Nossa loja',
    })
    assertError(await send(world, { to: FRIEND, latitude: '91', longitude: '0' }), 401, 'validation.required')
  })

  test('operation 15: send buttons delivers text, header, footer and the three kinds of buttons; 401 for an unknown button type', async world => {
    const buttons = [
      { type: 'replyButton', displaytext: 'Pedido', id: 'pedido' },
      { type: 'urlButton', displaytext: 'Site', action: 'https://example.com' },
      { type: 'callButton', displaytext: 'Ligar', action: '+55 11 93333-4444' },
    ]
    const body = assertOk(await send(world, { to: FRIEND, message: 'Como ajudar?', header_title: 'Loja', footer_text: 'Atendimento', buttons }))
    assert.equal(body.message, 'Mensagem com botões enviada.')
    assert.deepEqual(await arrived(world, FRIEND, body.id), {
      id: body.id,
      from: SHOP,
      type: 'buttons',
      text: 'Como ajudar?',
      header: 'Loja',
      footer: 'Atendimento',
      buttons: [
        { type: 'reply', id: 'pedido', text: 'Pedido' },
        { type: 'url', text: 'Site', url: 'https://example.com' },
        { type: 'call', text: 'Ligar', phone: '+5511933334444' },
      ],
    })
    assertError(await send(world, { to: FRIEND, message: 'x', buttons: [{ type: 'bogus', displaytext: 'x' }] }), 401, 'validation.required')
  })

  test('operation 16: send carousel fetches each card image and delivers the cards with their buttons; 401 for a card without image', async world => {
    const files = await fileServer({ '/a.png': { body: PNG, type: 'image/png' }, '/b.jpg': { body: JPEG, type: 'image/jpeg' } })
    try {
      const card = (title: string, image: string) => ({
        image_url: `${files.url}${image}`,
        title,
        description: `${title} desc`,
        buttons: [{ type: 'quickReplyButton', displaytext: 'Quero', id: `want-${title}` }],
      })
      const body = assertOk(
        await send(world, { to: FRIEND, message: 'Ofertas', footer_text: 'Até domingo', cards: [card('A', '/a.png'), card('B', '/b.jpg')] }),
      )
      assert.equal(body.message, 'Carrossel enviado.')
      const got = await arrived(world, FRIEND, body.id)
      assert.deepEqual(
        { ...got, cards: got.cards.map((c: any) => ({ ...c, image: pick(c.image, ['mimetype', 'bytes']) })) },
        {
          id: body.id,
          from: SHOP,
          type: 'carousel',
          text: 'Ofertas',
          footer: 'Até domingo',
          cards: [
            {
              title: 'A',
              description: 'A desc',
              image: { mimetype: 'image/png', bytes: PNG.length },
              buttons: [{ type: 'reply', id: 'want-A', text: 'Quero' }],
            },
            {
              title: 'B',
              description: 'B desc',
              image: { mimetype: 'image/jpeg', bytes: JPEG.length },
              buttons: [{ type: 'reply', id: 'want-B', text: 'Quero' }],
            },
          ],
        },
      )
      assertError(await send(world, { to: FRIEND, message: 'x', cards: [{ title: 'sem imagem', buttons: [] }] }), 401, 'validation.required')
    } finally {
      await files.stop()
    }
  })
}

/** `entry` with only `keys` (those it has). */
export function pick(entry: Record<string, any> | undefined, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter(k => entry?.[k] !== undefined).map(k => [k, entry![k]]))
}
