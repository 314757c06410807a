import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { fileServer, type FileServer } from '../helpers/file-server.ts'
import { DEVICE_PHONE, FRIEND, assertError, assertOk, inbox, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'
import { JPEG, PDF, PNG } from '../helpers/samples.ts'

const test = suite<{ g: SendingGateway; files: FileServer }>('operations 15 and 16: send buttons, send carousel')

test.before.each(async ctx => {
  ctx.files = await fileServer({
    '/a.png': { body: PNG, type: 'image/png' },
    '/b.jpg': { body: JPEG, type: 'image/jpeg' },
    '/doc.pdf': { body: PDF, type: 'application/pdf' },
  })
  ctx.g = await sendingGateway({ allowPrivateUrls: true })
})
test.after.each(async ctx => {
  await ctx.g.stop()
  await ctx.files.stop()
})

const threeButtons = [
  { type: 'replyButton', displaytext: 'Quero comprar', id: 'buy' },
  { type: 'urlButton', displaytext: 'Ver site', action: 'https://example.com/loja' },
  { type: 'callButton', displaytext: 'Ligar', action: '+55 11 3333-4444' },
]

test('send buttons delivers the text, header, footer and the three kinds of buttons', async ({ g }) => {
  const body = assertOk(await g.send({ to: FRIEND, message: 'Escolha:', buttons: threeButtons, header_title: 'Loja', footer_text: 'Responda' }))
  assert.equal(body.message, 'Mensagem com botões enviada.')
  assert.deepEqual(inbox(g.network, FRIEND), [
    {
      id: body.id,
      from: DEVICE_PHONE,
      type: 'buttons',
      text: 'Escolha:',
      header: 'Loja',
      footer: 'Responda',
      buttons: [
        { type: 'reply', id: 'buy', text: 'Quero comprar' },
        { type: 'url', text: 'Ver site', url: 'https://example.com/loja' },
        { type: 'call', text: 'Ligar', phone: '+551133334444' },
      ],
    },
  ])
})

test('send buttons numbers reply buttons without an id, and the phone can tap them', async ({ g }) => {
  const body = assertOk(
    await g.send({
      to: FRIEND,
      message: 'Sim ou não?',
      buttons: [
        { type: 'replyButton', displaytext: 'Sim' },
        { type: 'replyButton', displaytext: 'Não' },
      ],
    }),
  )
  assert.deepEqual((inbox(g.network, FRIEND)[0] as { buttons: unknown }).buttons, [
    { type: 'reply', id: '1', text: 'Sim' },
    { type: 'reply', id: '2', text: 'Não' },
  ])
  await g.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'button', target: body.id, buttonId: '2', text: 'Não' })
})

test('send buttons reads buttons sent as qs-nested form fields, JSON text, or bracketed multipart fields', async ({ g }) => {
  const buttons = [{ type: 'replyButton', displaytext: 'Sim', id: 'y' }]
  assertOk(await g.send({ to: FRIEND, message: 'form', buttons }, 'form'))
  assertOk(await g.send({ to: FRIEND, message: 'json text', buttons: JSON.stringify(buttons) }, 'form'))
  assertOk(await g.send({ to: FRIEND, message: 'multipart', buttons }, 'multipart'))
  assertOk(
    await g.send({ to: FRIEND, message: 'brackets', 'buttons[0][type]': 'replyButton', 'buttons[0][displaytext]': 'Sim', 'buttons[0][id]': 'y' }, 'multipart'),
  )
  const entries = g.network.inbox(FRIEND) as unknown as { text: string; buttons: unknown }[]
  assert.deepEqual(
    entries.map(e => e.text),
    ['form', 'json text', 'multipart', 'brackets'],
  )
  for (const entry of entries) assert.deepEqual(entry.buttons, [{ type: 'reply', id: 'y', text: 'Sim' }])
})

test('send buttons answers 401 validation.required for a bad button type or a missing button field', async ({ g }) => {
  const bad = [
    [{ type: 'quickReplyButton', displaytext: 'x', id: '1' }],
    [{ type: 'listButton', displaytext: 'x' }],
    [{ displaytext: 'x' }],
    [{ type: 'replyButton' }],
    [{ type: 'urlButton', displaytext: 'x' }],
    [{ type: 'urlButton', displaytext: 'x', action: 'javascript:alert(1)' }],
    [{ type: 'callButton', displaytext: 'x' }],
    [{ type: 'callButton', displaytext: 'x', action: 'ligue já' }],
    [{ type: 'replyButton', displaytext: 'x'.repeat(21) }],
    [
      { type: 'replyButton', displaytext: 'a', id: 'same' },
      { type: 'replyButton', displaytext: 'b', id: 'same' },
    ],
    [...threeButtons, { type: 'replyButton', displaytext: 'quarto' }],
    [],
    'not json',
    { type: 'replyButton', displaytext: 'x' },
  ]
  for (const buttons of bad) assertError(await g.send({ to: FRIEND, message: 'x', buttons }), 401, 'validation.required')
  assertError(await g.send({ to: FRIEND, buttons: threeButtons }), 401, 'validation.required')
  assertError(await g.send({ message: 'x', buttons: threeButtons }), 401, 'validation.required')
  assertError(await g.send({ to: FRIEND, message: 'x', buttons: threeButtons, header_title: 'h'.repeat(61) }), 401, 'validation.required')
  assert.deepEqual(g.network.inbox(FRIEND), [])
})

const card = (files: FileServer, title: string, image = '/a.png') => ({
  image_url: `${files.url}${image}`,
  title,
  subtitle: `${title} sub`,
  description: `${title} desc`,
  buttons: [
    { type: 'quickReplyButton', displaytext: 'Quero', id: `want-${title}` },
    { type: 'urlButton', displaytext: 'Detalhes', action: 'https://example.com/p' },
  ],
})

test('send carousel fetches each card image and delivers the cards with their buttons', async ({ g, files }) => {
  const cards = [
    card(files, 'A'),
    { ...card(files, 'B', '/b.jpg'), subtitle: undefined, buttons: [{ type: 'callButton', displaytext: 'Ligar', action: '5511933334444' }] },
  ]
  const body = assertOk(await g.send({ to: FRIEND, message: 'Ofertas', cards, footer_text: 'Até domingo' }))
  assert.equal(body.message, 'Carrossel enviado.')
  assert.deepEqual(inbox(g.network, FRIEND), [
    {
      id: body.id,
      from: DEVICE_PHONE,
      type: 'carousel',
      text: 'Ofertas',
      footer: 'Até domingo',
      cards: [
        {
          title: 'A',
          subtitle: 'A sub',
          description: 'A desc',
          image: { mimetype: 'image/png', fileName: 'a.png', bytes: PNG.length },
          buttons: [
            { type: 'reply', id: 'want-A', text: 'Quero' },
            { type: 'url', text: 'Detalhes', url: 'https://example.com/p' },
          ],
        },
        {
          title: 'B',
          description: 'B desc',
          image: { mimetype: 'image/jpeg', fileName: 'b.jpg', bytes: JPEG.length },
          buttons: [{ type: 'call', text: 'Ligar', phone: '+5511933334444' }],
        },
      ],
    },
  ])
  assert.deepEqual(files.requests.sort(), ['/a.png', '/b.jpg'])
})

test('send carousel reads cards sent as qs-nested form fields', async ({ g, files }) => {
  assertOk(await g.send({ to: FRIEND, message: 'Form', cards: [card(files, 'A')] }, 'form'))
  assertOk(await g.send({ to: FRIEND, message: 'Multipart', cards: [card(files, 'A')] }, 'multipart'))
  assert.equal(g.network.inbox(FRIEND).length, 2)
})

test('send carousel answers 401 validation.required for a bad card, a bad button type or a missing field', async ({ g, files }) => {
  const good = card(files, 'A')
  const bad = [
    [{ ...good, buttons: [{ type: 'replyButton', displaytext: 'x', id: '1' }] }],
    [{ ...good, buttons: [{ type: 'quickReplyButton', displaytext: 'x' }] }],
    [{ ...good, buttons: [{ type: 'urlButton', displaytext: 'x' }] }],
    [{ ...good, buttons: [{ type: 'callButton', displaytext: 'x', action: 'abc' }] }],
    [{ ...good, buttons: [] }],
    [{ ...good, buttons: [good.buttons[0], good.buttons[1], { type: 'urlButton', displaytext: 'y', action: 'https://e.com' }] }],
    [{ ...good, buttons: [good.buttons[0], good.buttons[0]] }],
    [{ ...good, image_url: undefined }],
    [{ ...good, image_url: 'not a url' }],
    [{ ...good, title: undefined }],
    [{ ...good, description: 'd'.repeat(161) }],
    Array.from({ length: 11 }, (_, i) => card(files, `C${i}`)),
    [],
  ]
  for (const cards of bad) assertError(await g.send({ to: FRIEND, message: 'x', cards }), 401, 'validation.required')
  assertError(await g.send({ to: FRIEND, cards: [good] }), 401, 'validation.required')
  assert.deepEqual(g.network.inbox(FRIEND), [])
})

test('send carousel answers 401 validation.required when two cards share a quick reply id, before any image is fetched', async ({ g, files }) => {
  // A tap carries the button's id (the Botão event's buttonId) and its label: with one id on two cards, which card was tapped is lost.
  const [a, b] = [card(files, 'A'), card(files, 'B', '/b.jpg')]
  const shared = (id: string) => ({ ...b, buttons: [{ ...b.buttons[0], id }, b.buttons[1]] })
  for (const other of [shared('want-A'), shared(' want-A ')])
    assertError(await g.send({ to: FRIEND, message: 'x', cards: [a, other] }), 401, 'validation.required')
  assert.deepEqual(g.network.inbox(FRIEND), [])
  assert.deepEqual(files.requests, [])
  // Other buttons may repeat across cards (a URL or call button has no id), and distinct ids go through.
  assertOk(await g.send({ to: FRIEND, message: 'x', cards: [a, b] }))
})

test('send carousel answers 400 when a card image is not an image or its URL is refused', async ({ g, files }) => {
  assertError(
    await g.send({ to: FRIEND, message: 'x', cards: [card(files, 'A', '/doc.pdf')] }),
    400,
    'A imagem do cartão (image_url) não é uma imagem JPEG, PNG ou WebP.',
  )
  assertError(
    await g.send({ to: FRIEND, message: 'x', cards: [card(files, 'A', '/missing.png')] }),
    400,
    'O servidor do arquivo respondeu com erro. (HTTP 404)',
  )
  const strict = await sendingGateway()
  try {
    assertError(
      await strict.send({ to: FRIEND, message: 'x', cards: [card(files, 'A')] }),
      400,
      'URL do arquivo não permitida: use http(s) de um endereço público.',
    )
  } finally {
    await strict.stop()
  }
})

test('send buttons and send carousel answer 404 for an appkey of another account', async ({ g, files }) => {
  const other = await g.t.register()
  const { appkey } = await g.t.addDevice(other.authkey, 'outra')
  assertError(await g.send({ appkey, to: FRIEND, message: 'x', buttons: threeButtons }), 404, 'Nenhum dispositivo encontrado.')
  assertError(await g.send({ appkey, to: FRIEND, message: 'x', cards: [card(files, 'A')] }), 404, 'Nenhum dispositivo encontrado.')
})

test.run()
