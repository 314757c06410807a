import assert from 'node:assert/strict'
import { DEVICE_PHONE, FRIEND, assertOk, inbox, sendingSuite } from '../helpers/messaging.ts'

const test = sendingSuite('field spellings: numbers as their text, null as absent')

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='

test('create group reads usuarios given as a JSON number as its digits, like every other field', async ({ g }) => {
  const body = assertOk(await g.groups({ message: 'Equipe', usuarios: Number(FRIEND), criarGrupo: 'true' }))
  assert.deepEqual(
    g.network.group(body.grupoId)!.participants.map(p => p.phone),
    [DEVICE_PHONE, FRIEND],
  )
})

test('an optional field sent as null is absent (as a null distinguishing field is): the send goes out without it', async ({ g }) => {
  const text = assertOk(await g.send({ to: FRIEND, message: 'agora', agendamento: null }))
  assert.equal(text.message, 'Mensagem de texto enviada.')
  const media = assertOk(await g.send({ to: FRIEND, file: PNG, message: null, descricao: null, format: null }))
  const location = assertOk(await g.send({ to: FRIEND, latitude: '-23.5505', longitude: '-46.6333', message: null }))
  const buttons = assertOk(
    await g.send({ to: FRIEND, message: 'Escolha', header_title: null, footer_text: null, buttons: [{ type: 'replyButton', displaytext: 'Sim', id: null }] }),
  )
  assert.deepEqual(inbox(g.network, FRIEND), [
    { id: text.id, from: DEVICE_PHONE, type: 'text', text: 'agora' },
    { id: media.id, from: DEVICE_PHONE, type: 'image', mimetype: 'image/png', bytes: 70 },
    { id: location.id, from: DEVICE_PHONE, type: 'location', latitude: -23.5505, longitude: -46.6333 },
    { id: buttons.id, from: DEVICE_PHONE, type: 'buttons', text: 'Escolha', buttons: [{ type: 'reply', id: '1', text: 'Sim' }] },
  ])
})

test('mark as read with the id in markRead and idMessagem null sends the read receipt', async ({ g }) => {
  const received = await g.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'oi' })
  await g.network.settled()
  assertOk(await g.send({ to: FRIEND, markRead: received, idMessagem: null, idMensagem: null }))
  assert.deepEqual(
    inbox(g.network, FRIEND).map(({ id: _id, ...entry }) => entry),
    [{ from: DEVICE_PHONE, type: 'read', target: received }],
  )
})

test.run()
