import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { DEVICE_PHONE, FRIEND, OTHER, assertError, assertOk, inbox, sendingGateway, without, type SendingGateway } from '../helpers/messaging.ts'

const test = suite<{ g: SendingGateway; sent: string }>('operations 12 to 14: react, delete, mark as read')

test.before.each(async ctx => {
  ctx.g = await sendingGateway()
  ctx.sent = assertOk(await ctx.g.send({ to: FRIEND, message: 'primeira' })).id
  ctx.g.network.clearInbox(FRIEND)
})
test.after.each(async ctx => {
  await ctx.g.stop()
})

test('react delivers the emoji with the target message id', async ({ g, sent }) => {
  const body = assertOk(await g.send({ to: FRIEND, reactionMessage: 'true', message: '❤️', id: sent }))
  assert.equal(body.message, 'Reação enviada.')
  assert.deepEqual(inbox(g.network, FRIEND), [{ id: body.id, from: DEVICE_PHONE, type: 'reaction', target: sent, emoji: '❤️' }])
})

test('react to a message received from the phone works too, and remove sends an empty emoji', async ({ g }) => {
  const received = await g.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'oi' })
  assertOk(await g.send({ to: FRIEND, reactionMessage: true, message: '👍🏽', id: received }))
  const removed = assertOk(await g.send({ to: FRIEND, reactionMessage: '1', message: 'remove', id: received }))
  assert.equal(removed.message, 'Reação removida.')
  assert.deepEqual(
    inbox(g.network, FRIEND).map(e => [e.type, e.target, e.emoji]),
    [
      ['reaction', received, '👍🏽'],
      ['reaction', received, ''],
    ],
  )
})

test('react answers 401 validation.required for a missing field or a text that is not one emoji', async ({ g, sent }) => {
  const body = { to: FRIEND, reactionMessage: 'true', message: '👍', id: sent }
  for (const field of ['to', 'message', 'id', 'appkey']) {
    assertError(await g.t.post('/api/create-message', without({ ...body, appkey: g.appkey, authkey: g.authkey }, field)), 401, 'validation.required')
  }
  for (const message of ['ok', '👍👍', 'a👍']) assertError(await g.send({ ...body, message }), 401, 'validation.required')
  assertError(await g.send({ ...body, reactionMessage: 'maybe' }), 401, 'validation.required')
  assert.deepEqual(g.network.inbox(FRIEND), [])
})

test('react accepts exactly one real emoji: a pictograph (with its variation or skin tone), a keycap, a flag, a ZWJ sequence', async ({ g, sent }) => {
  const valid = ['👍', '❤️', '❤', '1️⃣', '#️⃣', '🇧🇷', '👨‍👩‍👧', '👍🏽', '🏳️‍🌈', '🧑🏽‍🚀', '🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}', ' 😀 ']
  for (const message of valid) assertOk(await g.send({ to: FRIEND, reactionMessage: 'true', message, id: sent }))
  assert.deepEqual(
    inbox(g.network, FRIEND).map(e => e.emoji),
    valid.map(e => e.trim()),
  )
})

test('react refuses a lone combining mark, keycap or variation selector, a lone regional indicator, a letter, two emoji (401)', async ({ g, sent }) => {
  const body = { to: FRIEND, reactionMessage: 'true', id: sent }
  for (const message of [
    '\u20e3',
    '\u20e3\u20e3',
    'a\u20e3',
    '\ufe0f',
    '\u0301',
    '👍\u0301',
    '\u{1F1E7}',
    '\u{1F1E7}\u{1F1F7}\u{1F1E7}',
    'a',
    '👍👍',
    '🇧🇷🇧🇷',
    '👍\u200d',
  ])
    assertError(await g.send({ ...body, message }), 401, 'validation.required')
  assert.deepEqual(g.network.inbox(FRIEND), [])
})

test('react refuses one grapheme longer than the network takes (32 UTF-16 units): 401, rather than sent and refused by the network (400)', async ({
  g,
  sent,
}) => {
  // No emoji is that long (the longest, a couple with two skin tones, is 15 units); each of these passes for one emoji grapheme.
  const tags = [...'abcdefghijklmnopqrst'].map(c => String.fromCodePoint(0xe0000 + c.codePointAt(0)!)).join('')
  const body = { to: FRIEND, reactionMessage: 'true', id: sent }
  for (const message of [`\u{1F3F4}${tags}\u{E007F}`, Array(12).fill('\u{1F600}').join('\u200d')]) {
    assertError(await g.send({ ...body, message }), 401, 'validation.required')
  }
  assert.deepEqual(g.network.inbox(FRIEND), [])
})

test('react answers 404 for an unknown target message', async ({ g }) => {
  assertError(await g.send({ to: FRIEND, reactionMessage: 'true', message: '👍', id: '3EB0000000000000DEAD' }), 404, 'Mensagem não encontrada nesta conversa.')
  assertError(await g.send({ to: OTHER, reactionMessage: 'true', message: '👍', id: '3EB0000000000000DEAD' }), 404, 'Mensagem não encontrada nesta conversa.')
})

test('delete sends a deletion of the target message for everyone', async ({ g, sent }) => {
  const body = assertOk(await g.send({ to: FRIEND, message: 'false', deleteID: sent }))
  assert.equal(body.message, 'Mensagem apagada.')
  assert.deepEqual(inbox(g.network, FRIEND), [{ id: body.id, from: DEVICE_PHONE, type: 'delete', target: sent }])
  // The message is gone: deleting or reacting to it again finds nothing.
  assertError(await g.send({ to: FRIEND, message: false, deleteID: sent }), 404, 'Mensagem não encontrada nesta conversa.')
})

test('delete answers 401 validation.required when message is not false or a field is missing', async ({ g, sent }) => {
  assertError(await g.send({ to: FRIEND, message: 'true', deleteID: sent }), 401, 'validation.required')
  assertError(await g.send({ to: FRIEND, deleteID: sent }), 401, 'validation.required')
  assertError(await g.send({ message: 'false', deleteID: sent }), 401, 'validation.required')
  assertError(await g.send({ authkey: 'nope', to: FRIEND, message: 'false', deleteID: sent }), 401, 'validation.required')
  assert.deepEqual(g.network.inbox(FRIEND), [])
})

test('delete of a message the device did not send is refused and deletes nothing', async ({ g }) => {
  const received = await g.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'minha' })
  assertError(await g.send({ to: FRIEND, message: 'false', deleteID: received }), 400, 'Mensagem recusada pela rede.')
  assert.deepEqual(g.network.inbox(FRIEND), [])
})

test('mark as read sends a read receipt for the message to its sender', async ({ g }) => {
  const received = await g.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'leia' })
  const body = assertOk(await g.send({ to: `+${FRIEND}`, markRead: received }))
  assert.deepEqual(body, { status: 200, message: 'Mensagem marcada como lida.' })
  assert.deepEqual(
    inbox(g.network, FRIEND).map(({ id: _id, ...e }) => e),
    [{ from: DEVICE_PHONE, type: 'read', target: received }],
  )
})

test('mark as read accepts markRead "true" with the id in idMessagem or idMensagem', async ({ g }) => {
  const first = await g.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'um' })
  const second = await g.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'dois' })
  assertOk(await g.send({ to: FRIEND, markRead: 'true', idMessagem: first }))
  assertOk(await g.send({ to: FRIEND, markRead: true, idMensagem: second }))
  assert.deepEqual(
    g.network.inbox(FRIEND).map(e => (e as { target: string }).target),
    [first, second],
  )
  assertError(await g.send({ to: FRIEND, markRead: 'true' }), 401, 'validation.required')
})

test('mark as read answers 401 without to and 404 for a message that the device did not receive from that chat', async ({ g, sent }) => {
  const received = await g.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'leia' })
  assertError(await g.send({ markRead: received }), 401, 'validation.required')
  assertError(await g.send({ to: OTHER, markRead: received }), 404, 'Mensagem não encontrada nesta conversa.')
  assertError(await g.send({ to: FRIEND, markRead: sent }), 404, 'Mensagem não encontrada nesta conversa.')
  assertError(await g.send({ to: FRIEND, markRead: 'unknown-id' }), 404, 'Mensagem não encontrada nesta conversa.')
  assert.deepEqual(g.network.inbox(FRIEND), [])
})

test('mark as read answers 401 validation.required for markRead false in any flag spelling (not a message id), and sends nothing', async ({ g }) => {
  const received = await g.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'leia' })
  for (const markRead of [false, 'false', 'FALSE', 0, '0']) {
    assertError(await g.send({ to: FRIEND, markRead }), 401, 'validation.required')
    assertError(await g.send({ to: FRIEND, markRead, idMessagem: received }), 401, 'validation.required')
  }
  assert.deepEqual(g.network.inbox(FRIEND), [])
})

test('react, delete and mark as read answer 404 for an appkey of another account', async ({ g, sent }) => {
  const other = await g.t.register()
  const { appkey } = await g.t.addDevice(other.authkey, 'outra')
  assertError(await g.send({ appkey, to: FRIEND, reactionMessage: 'true', message: '👍', id: sent }), 404, 'Nenhum dispositivo encontrado.')
  assertError(await g.send({ appkey, to: FRIEND, message: 'false', deleteID: sent }), 404, 'Nenhum dispositivo encontrado.')
  assertError(await g.send({ appkey, to: FRIEND, markRead: sent }), 404, 'Nenhum dispositivo encontrado.')
})

test.run()
