import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { fileServer, type FileServer } from '../helpers/file-server.ts'
import { request } from '../helpers/http.ts'
import { FRIEND, assertError, assertOk, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'
import { PNG } from '../helpers/samples.ts'

/**
 * Every documented limit, at its edge: the largest value allowed is accepted and one more is
 * refused with the documented status, never a crash (README, Decisions: Limits and Media).
 */
const test = suite<{ g: SendingGateway; files: FileServer }>('limits: the edge is accepted, one past it is refused with the documented status')

const MAX_MEDIA = 64 * 1024

test.before(async ctx => {
  ctx.files = await fileServer({
    '/card.png': { body: PNG, type: 'image/png' },
    '/big.bin': { body: Buffer.alloc(MAX_MEDIA + 1, 1), type: 'application/octet-stream' },
    '/big-streamed.bin': { body: Buffer.alloc(MAX_MEDIA + 1, 1), chunked: true },
    '/edge.bin': { body: Buffer.alloc(MAX_MEDIA, 1), type: 'application/octet-stream' },
  })
  ctx.g = await sendingGateway({ allowPrivateUrls: true, mediaMaxBytes: MAX_MEDIA, bodyLimit: '256kb', rateLimit: false })
})
test.after(async ctx => {
  await ctx.g.stop()
  await ctx.files.stop()
})

const REQUIRED = 'validation.required'
const reply = (i: number) => ({ type: 'replyButton', displaytext: `Opção ${i}`, id: `o${i}` })
const cardButton = (i: number) => ({ type: 'quickReplyButton', displaytext: `Botão ${i}`, id: `b${i}` })

/** One limit: a body at the edge (accepted) and one past it (refused 401 validation.required). */
type Edge = [name: string, edge: () => Record<string, unknown>, past: () => Record<string, unknown>]

test('text, caption, interactive and group fields: at the limit 200, one past it 401 validation.required', async ({ g, files }) => {
  const card = (extra: Record<string, unknown> = {}) => ({ image_url: `${files.url}/card.png`, title: 'Pizza', buttons: [cardButton(1)], ...extra })
  const buttons = (n: number, extra: Record<string, unknown> = {}) => ({
    to: FRIEND,
    message: 'Escolha',
    buttons: Array.from({ length: n }, (_, i) => reply(i + 1)),
    ...extra,
  })
  const carousel = (cards: unknown[], extra: Record<string, unknown> = {}) => ({ to: FRIEND, message: 'Ofertas', cards, ...extra })
  const phones = (n: number) => Array.from({ length: n }, (_, i) => String(5511900000000 + i)).join('-')
  const edges: Edge[] = [
    ['text 65 536 characters', () => ({ to: FRIEND, message: 'a'.repeat(65_536) }), () => ({ to: FRIEND, message: 'a'.repeat(65_537) })],
    [
      'caption 1 024',
      () => ({ to: FRIEND, file: PNG.toString('base64'), descricao: 'c'.repeat(1024) }),
      () => ({ to: FRIEND, file: PNG.toString('base64'), descricao: 'c'.repeat(1025) }),
    ],
    ['buttons text 1 024', () => buttons(1, { message: 'm'.repeat(1024) }), () => buttons(1, { message: 'm'.repeat(1025) })],
    ['3 buttons', () => buttons(3), () => buttons(4)],
    ['at least 1 button', () => buttons(1), () => buttons(0)],
    [
      'button label 20',
      () => buttons(1, { buttons: [{ ...reply(1), displaytext: 'l'.repeat(20) }] }),
      () => buttons(1, { buttons: [{ ...reply(1), displaytext: 'l'.repeat(21) }] }),
    ],
    ['header_title 60', () => buttons(1, { header_title: 'h'.repeat(60) }), () => buttons(1, { header_title: 'h'.repeat(61) })],
    ['footer_text 60', () => buttons(1, { footer_text: 'f'.repeat(60) }), () => buttons(1, { footer_text: 'f'.repeat(61) })],
    [
      '10 cards',
      () => carousel(Array.from({ length: 10 }, (_, i) => card({ buttons: [cardButton(i + 1)] }))),
      () => carousel(Array.from({ length: 11 }, (_, i) => card({ buttons: [cardButton(i + 1)] }))),
    ],
    ['at least 1 card', () => carousel([card()]), () => carousel([])],
    [
      '2 buttons per card',
      () => carousel([card({ buttons: [cardButton(1), cardButton(2)] })]),
      () => carousel([card({ buttons: [cardButton(1), cardButton(2), cardButton(3)] })]),
    ],
    ['card title 60', () => carousel([card({ title: 't'.repeat(60) })]), () => carousel([card({ title: 't'.repeat(61) })])],
    ['card description 160', () => carousel([card({ description: 'd'.repeat(160) })]), () => carousel([card({ description: 'd'.repeat(161) })])],
    ['carousel text 1 024', () => carousel([card()], { message: 'm'.repeat(1024) }), () => carousel([card()], { message: 'm'.repeat(1025) })],
  ]
  for (const [name, edge, past] of edges) {
    const accepted = await g.send(edge())
    assert.equal(accepted.status, 200, `${name}, at the edge: ${accepted.text}`)
    const refused = await g.send(past())
    assert.deepEqual([refused.status, refused.body], [401, { status: 401, message: REQUIRED }], `${name}, one past it`)
  }
  const group = (name: string, usuarios: string) => g.groups({ message: name, usuarios, criarGrupo: 'true' })
  assertOk(await group('g'.repeat(100), FRIEND))
  assertError(await group('g'.repeat(101), FRIEND), 401, REQUIRED)
  assertOk(await group('Grande', phones(1023)))
  assertError(await group('Grande demais', phones(1024)), 401, REQUIRED)
  assertError(await group('Vazio', ''), 401, REQUIRED)
})

test('media: a file of mediaMaxBytes is sent, one byte more is 413, by base64, upload, URL (announced or streamed) or card image', async ({ g, files }) => {
  const TOO_LARGE = 'Arquivo maior que o limite permitido. (0.1 MB)'
  assertOk(await g.send({ to: FRIEND, file: Buffer.alloc(MAX_MEDIA, 7).toString('base64') }))
  assertOk(await g.send({ to: FRIEND, file: `${files.url}/edge.bin` }))
  assertError(await g.send({ to: FRIEND, file: Buffer.alloc(MAX_MEDIA + 1, 7).toString('base64') }), 413, TOO_LARGE)
  assertError(await g.send({ to: FRIEND, file: new File([Buffer.alloc(MAX_MEDIA + 1, 7)], 'big.bin') }, 'multipart'), 413, TOO_LARGE)
  assertError(await g.send({ to: FRIEND, file: `${files.url}/big.bin` }), 413, TOO_LARGE)
  assertError(await g.send({ to: FRIEND, file: `${files.url}/big-streamed.bin` }), 413, TOO_LARGE)
  const card = { image_url: `${files.url}/big.bin`, title: 'Pizza', buttons: [cardButton(1)] }
  assertError(await g.send({ to: FRIEND, message: 'Ofertas', cards: [card] }), 413, TOO_LARGE)
})

test('request body: over bodyLimit is 413 in every encoding, and the gateway keeps answering', async ({ g }) => {
  const big = 'x'.repeat(300 * 1024)
  for (const encoding of ['json', 'form', 'multipart'] as const) {
    assertError(await g.send({ to: FRIEND, message: big }, encoding), 413, 'Corpo da requisição grande demais.')
  }
  const raw = await request(`${g.t.url}/api/create-message`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"message":"${big}` })
  assert.equal(raw.status, 413)
  assertOk(await g.send({ to: FRIEND, message: 'ainda aqui' }))
})

test.run()
