import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { DEVICE_PHONE, FRIEND, OTHER as HIDDEN } from '../../helpers/messaging.ts'
import { receiverWorld, stopReceiverWorld, type ReceiverWorld } from '../../helpers/receiver.ts'
import { internalsOf } from '../../../src/internals.ts'

type Context = ReceiverWorld

const test = suite<Context>('webhook events: every kind reaches the receiver, signed')

test.before.each(async ctx => {
  Object.assign(ctx, await receiverWorld('events-device', { webhookRetryMs: [50] }))
})

test.after.each(stopReceiverWorld)

/** The verified payload of the message `id` (waits for it). */
async function payloadOf(ctx: Context, id: string): Promise<any> {
  await ctx.t.network.settled()
  await ctx.receiver.waitForHooks(1)
  const deadline = Date.now() + 10_000
  for (;;) {
    const found = ctx.receiver.verified(ctx.device.webhookSecret).find(p => p.idMessagem === id)
    if (found) return found
    if (Date.now() > deadline) throw new Error(`no webhook for message ${id}`)
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

test('a received text is a Texto event with the envelope of DESIGN.md, sender LID and push name included', async ctx => {
  const lid = ctx.t.network.registerPhone(FRIEND, { lid: true, pushName: 'Maria' })
  const id = await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'Olá!' })
  const payload = await payloadOf(ctx, id)
  assert.equal(payload, {
    event: 'Texto',
    idMessagem: id,
    device: ctx.device.id,
    chat: FRIEND,
    from: FRIEND,
    fromLid: lid,
    pushName: 'Maria',
    to: DEVICE_PHONE,
    fromMe: false,
    isGroup: false,
    timestamp: payload.timestamp,
    text: 'Olá!',
  })
  assert.ok(Math.abs(payload.timestamp - Date.now()) < 60_000)
  const hook = ctx.receiver.hooks.find(h => JSON.parse(h.body).idMessagem === id)!
  assert.match(hook.headers['webhook-id'], /^msg_[A-Za-z0-9_-]{27}$/)
  assert.match(hook.headers['content-type'], /^application\/json/)
})

test('a sender that hides its number is reported by its LID in from and chat', async ctx => {
  const lid = ctx.t.network.registerPhone(HIDDEN, { lid: true, hidePhone: true })
  const id = await ctx.t.network.sendFromPhone(HIDDEN, DEVICE_PHONE, { type: 'text', text: 'quem sou eu?' })
  const payload = await payloadOf(ctx, id)
  assert.is(payload.from, lid)
  assert.is(payload.fromLid, lid)
  assert.is(payload.chat, lid)
})

test('media become Imagem, Vídeo, Áudio and Documento with caption, file name and type', async ctx => {
  const kinds = [
    ['image', 'Imagem', { caption: 'foto', fileName: 'a.png', mimetype: 'image/png', base64: 'iVBORw0KGgo=' }],
    ['video', 'Vídeo', { caption: 'filme', fileName: 'a.mp4', mimetype: 'video/mp4' }],
    ['audio', 'Áudio', { mimetype: 'audio/ogg', voiceNote: true }],
    ['document', 'Documento', { fileName: 'contrato.pdf', mimetype: 'application/pdf' }],
  ] as const
  for (const [type, event, fields] of kinds) {
    const id = await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type, ...fields } as any)
    const payload = await payloadOf(ctx, id)
    assert.is(payload.event, event)
    for (const [name, value] of Object.entries(fields)) assert.is(payload[name], value, `${type}.${name}`)
  }
})

test("a received file name loses bidirectional controls and path, as a sent one does, so `invoice<U+202E>fdp.exe.pdf` cannot show as invoiceexe.pdf to the webhook's reader", async ctx => {
  const marks = '\u200E\u200F\u061C\u202A\u202B\u202C\u202D\u2066\u2067\u2068\u2069'
  const cases = [
    ['invoice\u202Efdp.exe.pdf', 'invoicefdp.exe.pdf'],
    [`../re${marks}la\u200Ctório 👩\u200D💻\u0007.pdf`, 'rela\u200Ctório 👩\u200D💻.pdf'],
  ]
  for (const [sent, shown] of cases) {
    const id = await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'document', fileName: sent, mimetype: 'application/pdf' })
    assert.is((await payloadOf(ctx, id)).fileName, shown)
  }
})

test('a contact is Contato with name, phone and vCard', async ctx => {
  const id = await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'contact', name: 'João', phone: '5511966660000' })
  const payload = await payloadOf(ctx, id)
  assert.is(payload.event, 'Contato')
  assert.is(payload.name, 'João')
  assert.is(payload.phone, '5511966660000')
  assert.match(payload.vcard, /BEGIN:VCARD[\s\S]*5511966660000/)
})

test('a location is Localização with coordinates and a map link', async ctx => {
  const id = await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'location', latitude: -23.5505, longitude: -46.6333, name: 'Sé' })
  const payload = await payloadOf(ctx, id)
  assert.is(payload.event, 'Localização')
  assert.is(payload.latitude, -23.5505)
  assert.is(payload.longitude, -46.6333)
  assert.is(payload.name, 'Sé')
  assert.is(payload.mapUrl, 'https://www.google.com/maps?q=-23.5505,-46.6333')
})

test('a map link carries plain decimals, also for a coordinate under 1e-6 (JavaScript writes 1e-7)', async ctx => {
  const id = await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'location', latitude: 1e-7, longitude: -2.5e-7 })
  const payload = await payloadOf(ctx, id)
  assert.is(payload.latitude, 1e-7)
  assert.is(payload.longitude, -2.5e-7)
  assert.is(payload.mapUrl, 'https://www.google.com/maps?q=0.0000001,-0.00000025')
})

test('a reaction is Reação with the emoji and the target message id; removing it says so', async ctx => {
  const target = await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'reaja' })
  const id = await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'reaction', target, emoji: '👍' })
  const payload = await payloadOf(ctx, id)
  assert.is(payload.event, 'Reação')
  assert.is(payload.emoji, '👍')
  assert.is(payload.target, target)
  assert.is(payload.removed, false)
  const removal = await payloadOf(ctx, await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'reaction', target, emoji: '' }))
  assert.is(removal.emoji, '')
  assert.is(removal.removed, true)
})

test('a message deleted for everyone is Deletada with the deleted message id', async ctx => {
  const target = await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'ops' })
  const id = await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'delete', target })
  const payload = await payloadOf(ctx, id)
  assert.is(payload.event, 'Deletada')
  assert.is(payload.target, target)
})

test('a button tap is Botão and a list choice is Lista, each with the chosen option', async ctx => {
  const transport = internalsOf(ctx.t.gateway).transport
  const sent = await transport.send(ctx.device.id, FRIEND, { kind: 'buttons', text: 'Confirma?', buttons: [{ type: 'reply', id: 'sim', text: 'Sim' }] })
  await ctx.t.network.settled()
  const tap = await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'button', target: sent.id, buttonId: 'sim', text: 'Sim' })
  const button = await payloadOf(ctx, tap)
  assert.is(button.event, 'Botão')
  assert.is(button.buttonId, 'sim')
  assert.is(button.text, 'Sim')
  assert.is(button.target, sent.id)
  const row = await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'button', target: sent.id, buttonId: 'opcao-2', text: 'Opção 2', list: true })
  const list = await payloadOf(ctx, row)
  assert.is(list.event, 'Lista')
  assert.is(list.buttonId, 'opcao-2')
})

test('group traffic carries isGroup and the group id', async ctx => {
  const group = ctx.t.network.createGroup(FRIEND, 'Família', [DEVICE_PHONE])
  const id = await ctx.t.network.sendFromPhone(FRIEND, group.id, { type: 'text', text: 'oi, grupo' })
  const payload = await payloadOf(ctx, id)
  assert.is(payload.isGroup, true)
  assert.is(payload.group, group.id)
  assert.is(payload.chat, group.id)
  assert.is(payload.to, group.id)
  assert.is(payload.from, FRIEND)
})

test("the device's own text (sent from its phone) is a Texto with fromMe true", async ctx => {
  const id = await ctx.t.network.sendFromPhone(DEVICE_PHONE, FRIEND, { type: 'text', text: 'enviei do celular' })
  const payload = await payloadOf(ctx, id)
  assert.is(payload.event, 'Texto')
  assert.is(payload.fromMe, true)
  assert.is(payload.from, DEVICE_PHONE)
  assert.is(payload.to, FRIEND)
})

test("the device's text sent through the API is a Texto in the chat the contact's replies come from: a LID's phone, a hidden number's LID", async ctx => {
  const friendLid = ctx.t.network.registerPhone(FRIEND, { lid: true })!
  const hiddenLid = ctx.t.network.registerPhone(HIDDEN, { lid: true, hidePhone: true })!
  for (const [to, phone, chat] of [
    [friendLid, FRIEND, FRIEND],
    [HIDDEN, HIDDEN, hiddenLid],
  ]) {
    const sent = await ctx.t.post('/api/create-message', { appkey: ctx.device.appkey, authkey: ctx.authkey, to, message: 'Pedido saiu' })
    assert.is(sent.status, 200, sent.text)
    const text = await payloadOf(ctx, sent.body.id)
    const reply = await payloadOf(ctx, await ctx.t.network.sendFromPhone(phone, DEVICE_PHONE, { type: 'text', text: 'Obrigado' }))
    assert.is(reply.chat, chat)
    assert.equal([text.event, text.fromMe, text.chat, text.to], ['Texto', true, chat, chat], `sent to ${to}`)
  }
})

test('every delivery of a run passes the standardwebhooks verifier and carries a distinct webhook-id', async ctx => {
  for (let i = 0; i < 5; i++) await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: `n${i}` })
  await ctx.receiver.waitForHooks(5)
  const payloads = ctx.receiver.verified(ctx.device.webhookSecret)
  assert.is(payloads.length, 5)
  assert.is(new Set(ctx.receiver.hooks.map(h => h.headers['webhook-id'])).size, 5)
  assert.equal(payloads.map(p => p.text).sort(), ['n0', 'n1', 'n2', 'n3', 'n4'])
})

test('a long text with accents and emoji verifies on the receiver of docs/api.md, whose raw body arrives in several chunks', async ctx => {
  // A body over one socket read (64 KiB) reaches the receiver in several chunks: each joined to a
  // string on its own, a character whose UTF-8 bytes straddle two chunks became U+FFFD and the
  // signature failed. The receiver (as docs/api.md) joins the bytes, then decodes them once.
  const text = 'Olá, ação! 🌍 '.repeat(12_000)
  const id = await ctx.t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text })
  const payload = await payloadOf(ctx, id) // verified with the standardwebhooks library
  assert.is(payload.text, text)
})

test('a device without a webhook URL stores no event at all', async ctx => {
  const { authkey } = await ctx.t.register()
  const quiet = await ctx.t.linkedDevice(authkey, 'no-webhook', '5511955550009')
  await ctx.t.network.sendFromPhone(FRIEND, '5511955550009', { type: 'text', text: 'ninguém ouve' })
  assert.is(await ctx.t.gateway.webhooks.pending(quiet.id), 0)
  const keys: string[] = []
  for await (const [key] of internalsOf(ctx.t.gateway).storage.list('webhook-')) keys.push(key)
  assert.equal(keys, [])
})

test.run()
