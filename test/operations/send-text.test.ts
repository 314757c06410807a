import assert from 'node:assert/strict'
import type { IncomingMessage } from '../../src/ports/transport.ts'
import { DEVICE_PHONE, FRIEND, OTHER, assertError, assertOk, inbox, sendingSuite, without } from '../helpers/messaging.ts'

const test = sendingSuite('operation 8: send text')

test('send text delivers the text to the phone and answers the network message id', async ({ g }) => {
  const body = assertOk(await g.send({ to: `+${FRIEND}`, message: 'Olá, tudo bem?' }))
  assert.equal(body.message, 'Mensagem de texto enviada.')
  assert.match(body.id, /^3EB0[0-9A-F]{16}$/)
  assert.deepEqual(inbox(g.network, FRIEND), [{ id: body.id, from: DEVICE_PHONE, type: 'text', text: 'Olá, tudo bem?' }])
})

test('send text reads to with or without +, with spaces and dashes, or as a network user id', async ({ g }) => {
  for (const to of [FRIEND, `+${FRIEND}`, '+55 11 98888-0002', '(55) 11 98888.0002', `${FRIEND}@s.whatsapp.net`, `${FRIEND}@c.us`]) {
    assertOk(await g.send({ to, message: `to ${to}` }))
  }
  assert.equal(g.network.inbox(FRIEND).length, 6)
})

test('send text to a group id reaches every other member of the group', async ({ g }) => {
  const group = g.network.createGroup(FRIEND, 'Família', [DEVICE_PHONE, OTHER])
  const body = assertOk(await g.send({ to: group.id, message: 'Oi, grupo' }))
  for (const phone of [FRIEND, OTHER]) {
    assert.deepEqual(inbox(g.network, phone), [{ id: body.id, from: DEVICE_PHONE, type: 'text', text: 'Oi, grupo', group: group.id }])
  }
  assert.deepEqual(g.network.inbox(DEVICE_PHONE), [])
})

test('send text publishes the sent text on the message feed as the device own message', async ({ g }) => {
  const seen: IncomingMessage[] = []
  g.t.gateway.events.on('message', ({ message }) => seen.push(message))
  const body = assertOk(await g.send({ to: FRIEND, message: 'registrado' }))
  assert.equal(seen.length, 1)
  assert.deepEqual(
    { id: seen[0].id, chat: seen[0].chat, from: seen[0].from, to: seen[0].to, fromMe: seen[0].fromMe, isGroup: seen[0].isGroup, content: seen[0].content },
    { id: body.id, chat: FRIEND, from: DEVICE_PHONE, to: FRIEND, fromMe: true, isGroup: false, content: { kind: 'text', text: 'registrado' } },
  )
})

test('send text accepts the device name as appkey', async ({ g }) => {
  assertOk(await g.send({ appkey: 'loja', to: FRIEND, message: 'pelo nome' }))
  assert.equal(g.network.inbox(FRIEND).length, 1)
})

test('send text accepts urlencoded and multipart bodies', async ({ g }) => {
  assertOk(await g.send({ to: FRIEND, message: 'form' }, 'form'))
  assertOk(await g.send({ to: FRIEND, message: 'multipart' }, 'multipart'))
  assert.deepEqual(
    g.network.inbox(FRIEND).map(e => (e as { text: string }).text),
    ['form', 'multipart'],
  )
})

test('send text answers 401 validation.required for each missing required field', async ({ g }) => {
  const body = { appkey: g.appkey, authkey: g.authkey, to: FRIEND, message: 'x' }
  for (const field of ['appkey', 'authkey', 'to', 'message']) {
    assertError(await g.t.post('/api/create-message', without(body, field)), 401, 'validation.required')
  }
  assertError(await g.send({ to: FRIEND, message: '   ' }), 401, 'validation.required')
  assert.deepEqual(g.network.inbox(FRIEND), [])
})

test('send text answers 401 validation.required for a to that is neither a phone nor a group id', async ({ g }) => {
  for (const to of ['abc', '123', '+55 11 99', '1234567890123456', 'someone@example.com', '12345@g.us.evil', 'group@g.us', '5511988880002@unknown']) {
    assertError(await g.send({ to, message: 'x' }), 401, 'validation.required')
  }
})

test('send text answers 401 validation.required for a text over 65 536 characters', async ({ g }) => {
  assertOk(await g.send({ to: FRIEND, message: 'a'.repeat(65_536) }))
  assertError(await g.send({ to: FRIEND, message: 'a'.repeat(65_537) }), 401, 'validation.required')
})

test('send text answers 401 validation.required for an unknown authkey', async ({ g }) => {
  assertError(await g.send({ authkey: 'not-a-key', to: FRIEND, message: 'x' }), 401, 'validation.required')
})

test('send text answers 404 for an appkey of another account', async ({ g }) => {
  const other = await g.t.register()
  const device = await g.t.addDevice(other.authkey, 'outra')
  assertError(await g.send({ appkey: device.appkey, to: FRIEND, message: 'x' }), 404, 'Nenhum dispositivo encontrado.')
  assertError(await g.send({ appkey: 'outra', to: FRIEND, message: 'x' }), 404, 'Nenhum dispositivo encontrado.')
})

test('send text answers 409 Dispositivo desconectado. for a device that is not connected', async ({ g }) => {
  await g.t.addDevice(g.authkey, 'nova')
  assertError(await g.send({ appkey: 'nova', to: FRIEND, message: 'x' }), 409, 'Dispositivo desconectado.')
  await g.network.unlink(g.deviceId)
  assertError(await g.send({ to: FRIEND, message: 'x' }), 409, 'Dispositivo desconectado.')
})

test('send text to a group the device is not in answers 404 and sends nothing', async ({ g }) => {
  const group = g.network.createGroup(FRIEND, 'Outros', [OTHER])
  const answer = await g.send({ to: group.id, message: 'x' })
  assert.equal(answer.status, 404)
  assert.deepEqual(g.network.inbox(OTHER), [])
})

test.run()
