import assert from 'node:assert/strict'
import { DEVICE_PHONE, FRIEND, assertError, assertOk, inbox, sendingSuite, without } from '../helpers/messaging.ts'

const test = sendingSuite('operations 10 and 11: send contact, send location')

test('send contact delivers a contact card with the name and the phone digits', async ({ g }) => {
  const body = assertOk(await g.send({ to: FRIEND, contact: 'Ana Souza', message: '+55 11 97777-0003' }))
  assert.equal(body.message, 'Contato enviado.')
  assert.deepEqual(inbox(g.network, FRIEND), [{ id: body.id, from: DEVICE_PHONE, type: 'contact', name: 'Ana Souza', phone: '5511977770003' }])
})

test('send contact answers 401 validation.required for a missing or invalid field', async ({ g }) => {
  const body = { to: FRIEND, contact: 'Ana', message: '5511977770003' }
  assertError(await g.send(without(body, 'to')), 401, 'validation.required')
  assertError(await g.send(without(body, 'message')), 401, 'validation.required')
  assertError(await g.send({ ...body, message: 'não é telefone' }), 401, 'validation.required')
  assertError(await g.send({ ...body, contact: 'x'.repeat(257) }), 401, 'validation.required')
  assertError(await g.send({ ...body, appkey: undefined }), 401, 'validation.required')
  assertError(await g.send({ ...body, authkey: 'nope' }), 401, 'validation.required')
  assert.deepEqual(g.network.inbox(FRIEND), [])
})

test('send location delivers the coordinates and the optional text', async ({ g }) => {
  const body = assertOk(await g.send({ to: FRIEND, latitude: '-23.5505', longitude: '-46.6333', message: 'Praça da Sé' }))
  assert.equal(body.message, 'Localização enviada.')
  const plain = assertOk(await g.send({ to: FRIEND, latitude: 48.8584, longitude: 2.2945 }))
  assert.deepEqual(inbox(g.network, FRIEND), [
    { id: body.id, from: DEVICE_PHONE, type: 'location', latitude: -23.5505, longitude: -46.6333, text: 'Praça da Sé' },
    { id: plain.id, from: DEVICE_PHONE, type: 'location', latitude: 48.8584, longitude: 2.2945 },
  ])
})

test('send location reads a coordinate sent as a JSON number as its decimal, also one JSON writes in exponent form (1e-7)', async ({ g }) => {
  // JSON.stringify(0.0000001) is '1e-7': a client sending its coordinates as numbers sends that.
  const body = assertOk(await g.send({ to: FRIEND, latitude: 0.0000001, longitude: -0.00000025 }))
  assert.equal(body.message, 'Localização enviada.')
  assert.deepEqual(inbox(g.network, FRIEND), [{ id: body.id, from: DEVICE_PHONE, type: 'location', latitude: 1e-7, longitude: -2.5e-7 }])
  assertError(await g.send({ to: FRIEND, latitude: 1e21, longitude: 0 }), 401, 'validation.required')
})

test('send location answers 401 validation.required for a missing coordinate or one out of range', async ({ g }) => {
  const body = { to: FRIEND, latitude: '-23.5', longitude: '-46.6' }
  assertError(await g.send(without(body, 'latitude')), 401, 'validation.required')
  assertError(await g.send(without(body, 'longitude')), 401, 'validation.required')
  assertError(await g.send(without(body, 'to')), 401, 'validation.required')
  assertError(await g.send({ ...body, latitude: '91' }), 401, 'validation.required')
  assertError(await g.send({ ...body, longitude: '-180.5' }), 401, 'validation.required')
  assertError(await g.send({ ...body, latitude: '23,5' }), 401, 'validation.required')
  assertError(await g.send({ ...body, latitude: 'NaN' }), 401, 'validation.required')
  assert.deepEqual(g.network.inbox(FRIEND), [])
})

test('send contact and send location answer 404 for an appkey of another account', async ({ g }) => {
  const other = await g.t.register()
  const device = await g.t.addDevice(other.authkey, 'outra')
  assertError(await g.send({ appkey: device.appkey, to: FRIEND, contact: 'Ana', message: '5511977770003' }), 404, 'Nenhum dispositivo encontrado.')
  assertError(await g.send({ appkey: device.appkey, to: FRIEND, latitude: '1', longitude: '2' }), 404, 'Nenhum dispositivo encontrado.')
})

test.run()
