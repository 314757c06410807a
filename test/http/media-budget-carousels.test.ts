import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { fileServer, type FileServer } from '../helpers/file-server.ts'
import { mediaHeld } from '../helpers/gateway.ts'
import { FRIEND, assertError, assertOk, inbox, sendingGateway } from '../helpers/messaging.ts'
import { PNG } from '../helpers/samples.ts'

/**
 * The media budget counts a media URL download by the bytes it will hold (its declared
 * Content-Length, then what arrives past it), not by the largest file allowed: before, each card
 * image reserved `mediaMaxBytes` (16 MB) while it downloaded, a 10-card carousel 160 MB of the
 * 200 MB budget, and a second carousel of tiny images sent at the same time was answered 429.
 */
const test = suite<{ files: FileServer }>('media budget: carousels and downloads hold the bytes they download')

const MB = 1024 * 1024
/** A PNG of `bytes` (a 1x1 image padded after its end: sniffed as PNG). */
const bigPng = (bytes: number) => Buffer.concat([PNG, Buffer.alloc(bytes - PNG.length)])
const BUSY = 'Servidor ocupado com outros arquivos. Tente novamente em instantes.'

test.before(async ctx => {
  ctx.files = await fileServer({
    '/pequena.png': { body: PNG, type: 'image/png', delayMs: 700 },
    '/lenta-3mb.png': { body: bigPng(3 * MB), type: 'image/png', bodyDelayMs: 1500 },
    '/rapida-3mb.png': { body: bigPng(3 * MB), type: 'image/png' },
    '/sem-tamanho-3mb.png': { body: bigPng(3 * MB), type: 'image/png', chunked: true },
  })
})
test.after(async ctx => {
  await ctx.files.stop()
})

const cards = (url: string, prefix: string) =>
  Array.from({ length: 10 }, (_, i) => ({
    image_url: url,
    title: `Oferta ${i + 1}`,
    buttons: [{ type: 'quickReplyButton', displaytext: 'Quero', id: `${prefix}${i + 1}` }],
  }))

test('two 10-card carousels of small images sent together, default limits: both are sent', async ({ files }) => {
  const g = await sendingGateway({ allowPrivateUrls: true, rateLimit: false })
  try {
    const url = `${files.url}/pequena.png`
    const [a, b] = await Promise.all([
      g.send({ to: FRIEND, message: 'Ofertas A', cards: cards(url, 'a') }),
      g.send({ to: FRIEND, message: 'Ofertas B', cards: cards(url, 'b') }),
    ])
    assertOk(a)
    assertOk(b)
    const sent = inbox(g.network, FRIEND).map(m => [m.text, (m.cards as unknown[]).length])
    assert.deepEqual(sent.sort(), [
      ['Ofertas A', 10],
      ['Ofertas B', 10],
    ])
  } finally {
    await g.stop()
  }
})

test('large files still bound memory: past the budget a download is 429 by its Content-Length, or as its bytes arrive without one', async ({ files }) => {
  const g = await sendingGateway({ allowPrivateUrls: true, rateLimit: false, mediaMaxBytes: '4mb', mediaBytesInFlight: '5mb' })
  try {
    const one = (path: string) => [
      { image_url: `${files.url}${path}`, title: 'Grande', buttons: [{ type: 'quickReplyButton', displaytext: 'Quero', id: 'x' }] },
    ]
    const slow = g.send({ to: FRIEND, message: 'Lenta', cards: one('/lenta-3mb.png') })
    while (!files.requests.includes('/lenta-3mb.png')) await new Promise(resolve => setTimeout(resolve, 10))
    await mediaHeld(g.t.gateway, 3 * 1024 * 1024) // its headers reached the gateway: 3 MB held
    assertError(await g.send({ to: FRIEND, message: 'Declarada', cards: one('/rapida-3mb.png') }), 429, BUSY)
    assertError(await g.send({ to: FRIEND, message: 'Sem tamanho', cards: one('/sem-tamanho-3mb.png') }), 429, BUSY)
    assertError(await g.send({ to: FRIEND, file: `${files.url}/rapida-3mb.png` }), 429, BUSY)
    assertOk(await slow)
    assertOk(await g.send({ to: FRIEND, message: 'Declarada', cards: one('/rapida-3mb.png') }))
    assertOk(await g.send({ to: FRIEND, message: 'Sem tamanho', cards: one('/sem-tamanho-3mb.png') }))
    assert.deepEqual(
      inbox(g.network, FRIEND).map(m => m.text ?? m.type),
      ['Lenta', 'Declarada', 'Sem tamanho'],
    )
  } finally {
    await g.stop()
  }
})

test.run()
