import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { MediaLinks } from '../../src/domain/media-links.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { startGateway, type TestGateway } from '../helpers/gateway.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'
import { request } from '../helpers/http.ts'
import type { IncomingMessage, MediaPayload, MediaRef } from '../../src/ports/transport.ts'
import { internalsOf } from '../../src/internals.ts'

const links = suite('MediaLinks')

links('a signed token verifies to its device and message (where it is) until it expires', async () => {
  const media = new MediaLinks(memoryStorage())
  const message = { chat: '120363000000000001@g.us', id: 'm1', fromMe: false, participant: '5511900001111' }
  const token = await media.sign({ deviceId: 'd1', message }, 1000, 0)
  assert.equal(await media.verify(token, 500), { deviceId: 'd1', message })
  assert.is(await media.verify(token, 1000), undefined)
})

links('a link signed by 0.1.0 (device, message id, expiry) still verifies, to the id alone', async () => {
  const media = new MediaLinks(memoryStorage())
  const token = await media.sign({ deviceId: 'd1', message: { id: 'm1' } }, 1000, 0)
  assert.equal(JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString()), ['d1', 'm1', 1000], "0.1.0's payload")
  assert.equal(await media.verify(token, 500), { deviceId: 'd1', message: { id: 'm1' } })
})

links('a tampered, truncated or foreign token is refused', async () => {
  const storage = memoryStorage()
  const media = new MediaLinks(storage)
  const token = await media.sign({ deviceId: 'd1', message: { id: 'm1' } })
  const [payload, mac] = token.split('.')
  const forged = Buffer.from(JSON.stringify(['d2', 'm1', Date.now() + 1e6])).toString('base64url')
  for (const bad of [`${forged}.${mac}`, payload, `${payload}.`, `${payload}.${mac}.x`, 'garbage', '', 'a'.repeat(5000)])
    assert.is(await media.verify(bad), undefined, bad.slice(0, 20))
  assert.is(await new MediaLinks(memoryStorage()).verify(token), undefined, 'another key')
  assert.ok(await new MediaLinks(storage).verify(token), 'the key survives a restart through storage')
})

links('a store that fails the first key read is asked again: signing works once it answers (a failure is not kept)', async () => {
  const storage = memoryStorage()
  let down = true
  const flaky = { ...storage, get: <T>(key: string) => (down ? Promise.reject(new Error('store down')) : storage.get<T>(key)) }
  const media = new MediaLinks(flaky)
  await media.sign({ deviceId: 'd1', message: { id: 'm1' } }).then(
    () => assert.unreachable('signed without a key'),
    () => undefined,
  )
  down = false
  const token = await media.sign({ deviceId: 'd1', message: { id: 'm1' } })
  assert.ok(await media.verify(token))
})

links('processes sharing a store that create the key at once sign with the same key', async () => {
  const storage = memoryStorage()
  const [a, b] = [new MediaLinks(storage), new MediaLinks(storage)]
  const [ta, tb] = await Promise.all([a.sign({ deviceId: 'd1', message: { id: 'm1' } }), b.sign({ deviceId: 'd1', message: { id: 'm2' } })])
  assert.ok(await b.verify(ta), "b verifies a's link")
  assert.ok(await a.verify(tb), "a verifies b's link")
})

links.run()

type Ctx = { t: TestGateway; receiver: Receiver; bytes: Buffer }
const route = suite<Ctx>('media too large to inline reaches the webhook as a URL served by the gateway')
route.before(async ctx => {
  ctx.receiver = await startReceiver()
  ctx.t = await startGateway({ allowPrivateUrls: true, baseUrl: 'http://placeholder' })
  ctx.bytes = Buffer.from('%PDF-1.7 a large document'.repeat(1000))
  // The memory network inlines nothing here; this transport can fetch the bytes on demand, as Baileys does.
  const { transport } = internalsOf(ctx.t.gateway) as { transport: { downloadMedia?: unknown } }
  transport.downloadMedia = async (_deviceId: string, target: MediaRef): Promise<MediaPayload | undefined> =>
    target.id.startsWith('3EB0') ? { data: ctx.bytes, mimetype: 'application/pdf', fileName: 'contrato.pdf' } : undefined
  ;(internalsOf(ctx.t.gateway).resolved as { baseUrl?: string }).baseUrl = ctx.t.url
})
route.after(async ctx => {
  await ctx.t.stop()
  await ctx.receiver.stop()
})

route('the event carries a url; the url serves the bytes; a bad token is 404', async ({ t, receiver, bytes }) => {
  const { authkey } = await t.register()
  const device = await t.linkedDevice(authkey, 'docs', '5511944443333', { webhook: receiver.url })
  await t.network.sendFromPhone('5511900001111', '5511944443333', { type: 'document', fileName: 'contrato.pdf', mimetype: 'application/pdf' })
  await receiver.waitForHooks(1)
  const event = receiver.verified(device.webhookSecret)[0]
  assert.is(event.event, 'Documento')
  assert.is(event.base64, undefined)
  assert.match(event.url, new RegExp(`^${t.url}/media/[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$`))
  const download = await fetch(event.url)
  assert.is(download.status, 200)
  assert.is(download.headers.get('content-type'), 'application/pdf')
  assert.match(download.headers.get('content-disposition') ?? '', /contrato\.pdf/)
  assert.ok(Buffer.from(await download.arrayBuffer()).equals(bytes))
  const bad = await request(`${t.url}/media/${event.url.split('/media/')[1].slice(0, -3)}xyz`)
  assert.is(bad.status, 404)
  assert.is(bad.body.status, 404)
})

route("two messages with one id in two chats (a contact may reuse an id): each event's url serves its own media", async ({ t }) => {
  const receiver = await startReceiver()
  const { authkey } = await t.register()
  const device = await t.linkedDevice(authkey, 'mesmo-id', '5511944443335', { webhook: receiver.url })
  const { transport } = internalsOf(t.gateway) as { transport: { downloadMedia?: unknown } }
  const previous = transport.downloadMedia
  // A transport that keeps media where the network scopes ids: by chat, direction and group sender.
  const where = (m: MediaRef) => JSON.stringify(m.chat === undefined ? [] : [m.chat, m.fromMe, m.participant])
  const kept = new Map<string, string>()
  transport.downloadMedia = async (_deviceId: string, target: MediaRef): Promise<MediaPayload | undefined> => {
    const text = kept.get(`${where(target)} ${target.id}`)
    return text === undefined ? undefined : { data: Buffer.from(text), mimetype: 'text/plain' }
  }
  const deliver = async (from: string, text: string) => {
    const content = { kind: 'document' as const, mimetype: 'text/plain', fileName: 'nota.txt' }
    const message: IncomingMessage = {
      id: '3EB0SAMEID0002',
      chat: from,
      from,
      to: '5511944443335',
      fromMe: false,
      isGroup: false,
      timestamp: Date.now(),
      content,
    }
    kept.set(`${where({ chat: from, id: message.id, fromMe: false })} ${message.id}`, text)
    await t.network.devices.deliver(device.id, message)
  }
  try {
    await deliver('5511900002222', 'of the first chat')
    await deliver('5511900003333', 'of the second chat')
    await receiver.waitForHooks(2)
    const served = await Promise.all(receiver.verified(device.webhookSecret).map(async e => [e.chat, await (await fetch(e.url)).text()]))
    assert.equal(served.sort(), [
      ['5511900002222', 'of the first chat'],
      ['5511900003333', 'of the second chat'],
    ])
  } finally {
    transport.downloadMedia = previous
    await receiver.stop()
  }
})

route('the served media never runs in the browser: sandbox CSP and nosniff on every answer; attachment for types a browser would run', async ({ t }) => {
  const { authkey } = await t.register()
  const device = await t.linkedDevice(authkey, 'tipos', '5511944443334')
  const { transport, mediaLinks } = internalsOf(t.gateway) as unknown as { transport: { downloadMedia?: unknown }; mediaLinks: MediaLinks }
  const cases: [mimetype: string, fileName: string | undefined, disposition: 'inline' | 'attachment'][] = [
    ['image/jpeg', 'foto.jpg', 'inline'],
    ['image/png', undefined, 'inline'],
    ['audio/ogg; codecs=opus', undefined, 'inline'],
    ['video/mp4', 'video.mp4', 'inline'],
    ['application/pdf', 'contrato.pdf', 'inline'],
    ['text/plain', 'nota.txt', 'inline'],
    ['text/html', 'pagina.html', 'attachment'],
    ['text/html; charset=utf-8', undefined, 'attachment'],
    ['application/xhtml+xml', 'pagina.xhtml', 'attachment'],
    ['image/svg+xml', 'desenho.svg', 'attachment'],
    ['text/xml', undefined, 'attachment'],
    ['application/javascript', 'script.js', 'attachment'],
    ['text/javascript', undefined, 'attachment'],
    ['application/octet-stream', 'dados.bin', 'attachment'],
    ['application/x-unknown', undefined, 'attachment'],
    // The sender writes the type: a browser reads the last type of a list (Fetch's "extract a MIME type").
    ['image/png, text/html', 'foto.png', 'attachment'],
    ['video/mp4,text/html', undefined, 'attachment'],
    // A list after a parameter is a list too: Chromium renders `image/png; x=a, text/html` as HTML.
    ['image/png; x=a, text/html', 'foto.png', 'attachment'],
    ['audio/ogg; codecs=opus,text/html', undefined, 'attachment'],
    // Bytes a header may not carry (the sender's word): served as opaque bytes, never a 500.
    ['image/png\r\nSet-Cookie: a=1', undefined, 'attachment'],
    ['image/png', 'foto\r\nSet-Cookie: a=1.png', 'inline'],
  ]
  const previous = transport.downloadMedia
  transport.downloadMedia = async (_deviceId: string, target: MediaRef): Promise<MediaPayload | undefined> => {
    const [mimetype, fileName] = cases[Number(target.id.slice(5))]!
    return { data: Buffer.from('<script>alert(1)</script>'), mimetype, ...(fileName ? { fileName } : {}) }
  }
  try {
    for (const [i, [mimetype, fileName, disposition]] of cases.entries()) {
      const token = await mediaLinks.sign({ deviceId: device.id, message: { id: `TIPO-${i}` } })
      const answer = await fetch(`${t.url}/media/${token}`)
      assert.is(answer.status, 200, mimetype)
      assert.is(answer.headers.get('content-security-policy'), "sandbox; default-src 'none'", mimetype)
      assert.is(answer.headers.get('x-content-type-options'), 'nosniff', mimetype)
      const header = answer.headers.get('content-disposition') ?? ''
      assert.is(header.split(';')[0], disposition, `${mimetype}: ${header}`)
      if (fileName && !/[\r\n]/.test(fileName)) assert.ok(header.includes(`filename="${fileName}"`), header)
      if (/[\r\n]/.test(mimetype)) assert.is(answer.headers.get('content-type'), 'application/octet-stream')
      assert.is(answer.headers.get('set-cookie'), null, mimetype)
      assert.is(await answer.text(), '<script>alert(1)</script>')
    }
  } finally {
    transport.downloadMedia = previous
  }
})

route(
  'a received file name is served without bidirectional controls, as its webhook event shows it: `invoice<U+202E>fdp.exe.pdf` cannot save as invoiceexe.pdf',
  async ({ t }) => {
    const { authkey } = await t.register()
    const device = await t.linkedDevice(authkey, 'nomes', '5511944443336')
    const { transport, mediaLinks } = internalsOf(t.gateway) as unknown as { transport: { downloadMedia?: unknown }; mediaLinks: MediaLinks }
    const previous = transport.downloadMedia
    transport.downloadMedia = async () => ({ data: Buffer.from('%PDF-1.7'), mimetype: 'application/pdf', fileName: 'invoice\u202Efdp.exe.pdf' })
    try {
      const answer = await fetch(`${t.url}/media/${await mediaLinks.sign({ deviceId: device.id, message: { id: '3EB0NOME' } })}`)
      assert.is(answer.status, 200)
      assert.is(answer.headers.get('content-disposition'), 'inline; filename="invoicefdp.exe.pdf"')
    } finally {
      transport.downloadMedia = previous
    }
  },
)

route('a received file name with accents (`relatório ação.pdf`) is served as its event shows it: UTF-8 in `filename*`, the header in ASCII', async ({ t }) => {
  const { authkey } = await t.register()
  const device = await t.linkedDevice(authkey, 'acentos', '5511944443337')
  const { transport, mediaLinks } = internalsOf(t.gateway) as unknown as { transport: { downloadMedia?: unknown }; mediaLinks: MediaLinks }
  const previous = transport.downloadMedia
  const names = ['relatório ação.pdf', 'café.pdf', '日本語.pdf', 'plain.pdf']
  transport.downloadMedia = async (_deviceId: string, target: MediaRef) => ({
    data: Buffer.from('%PDF-1.7'),
    mimetype: 'application/pdf',
    fileName: names[Number(target.id.slice(9))],
  })
  try {
    for (const [i, name] of names.entries()) {
      const answer = await fetch(`${t.url}/media/${await mediaLinks.sign({ deviceId: device.id, message: { id: `3EB0NOME-${i}` } })}`)
      assert.is(answer.status, 200)
      const header = answer.headers.get('content-disposition') ?? ''
      assert.ok(/^[\x20-\x7e]*$/.test(header), `bytes a client reads as it likes (Latin-1 or UTF-8): ${header}`)
      const extended = /filename\*=UTF-8''([^;]+)/.exec(header)?.[1]
      assert.is(extended === undefined ? /filename="([^"]*)"/.exec(header)?.[1] : decodeURIComponent(extended), name, header)
      await answer.arrayBuffer()
    }
  } finally {
    transport.downloadMedia = previous
  }
})

route.run()

const test = suite('GET /media/:token and httpStatus')
test('always200 is for the API: a media link whose download fails answers an HTTP error, never 200 with JSON a downloader keeps as the file', async () => {
  const t = await startGateway({ httpStatus: 'always200' })
  try {
    const { authkey } = await t.register()
    const device = await t.linkedDevice(authkey, 'falha', '5511944443339')
    const { transport, mediaLinks } = internalsOf(t.gateway) as { transport: { downloadMedia?: unknown }; mediaLinks: MediaLinks }
    transport.downloadMedia = async () => Promise.reject(new Error('network gone'))
    const answer = await request(`${t.url}/media/${await mediaLinks.sign({ deviceId: device.id, message: { id: '3EB0FAIL' } })}`)
    assert.equal([answer.status, answer.body], [500, { status: 500, message: 'Erro interno.' }])
  } finally {
    await t.stop()
  }
})

test.run()
