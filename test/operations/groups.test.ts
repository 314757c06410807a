import assert from 'node:assert/strict'
import { DEVICE_PHONE, FRIEND, OTHER, assertError, assertOk, sendingSuite } from '../helpers/messaging.ts'

const test = sendingSuite('operations 21 to 23: groups')

const NOT_FOUND = 'Grupo não encontrado.'
const BAD_INVITE = 'Convite inválido ou expirado.'

test('group information by group id answers titulo, descricao and participantes with admin flags', async ({ g }) => {
  const group = g.network.createGroup(FRIEND, 'Clientes VIP', [DEVICE_PHONE, OTHER], { description: 'Só convidados' })
  const body = assertOk(await g.groups({ message: 'false', infoConvite: group.id }))
  assert.deepEqual(body, {
    status: 200,
    message: 'Grupo encontrado.',
    grupo: {
      id: group.id,
      titulo: 'Clientes VIP',
      descricao: 'Só convidados',
      participantes: [
        { id: `${FRIEND}@s.whatsapp.net`, admin: true },
        { id: `${DEVICE_PHONE}@s.whatsapp.net`, admin: false },
        { id: `${OTHER}@s.whatsapp.net`, admin: false },
      ],
    },
  })
})

test('group information by invite link or bare code works for a group the device is not in', async ({ g }) => {
  const group = g.network.createGroup(FRIEND, 'Aberto', [OTHER])
  const link = g.network.inviteLink(group.id)!
  for (const infoConvite of [link, `${link}?utm=x`, link.slice(link.lastIndexOf('/') + 1)]) {
    const body = assertOk(await g.groups({ message: 'false', infoConvite }))
    assert.equal(body.grupo.id, group.id)
    assert.equal(body.grupo.titulo, 'Aberto')
    assert.equal(body.grupo.descricao, '')
  }
})

test('group information answers 404 Grupo não encontrado. for an unknown group, a group the device is not in, or a bad invite', async ({ g }) => {
  const foreign = g.network.createGroup(FRIEND, 'Fechado', [OTHER])
  for (const infoConvite of ['120363999999999999@g.us', foreign.id, 'https://chat.whatsapp.com/AAAAAAAAAAAAAAAAAAAAAA', 'not an invite!']) {
    assertError(await g.groups({ message: 'false', infoConvite }), 404, NOT_FOUND)
  }
})

test('create group makes the device admin with the usuarios as members and answers grupoId', async ({ g }) => {
  const body = assertOk(await g.groups({ message: 'Equipe de vendas', usuarios: `+${FRIEND}-${OTHER}`, criarGrupo: 'true' }))
  assert.equal(body.message, 'Grupo criado.')
  assert.match(body.grupoId, /^\d+@g\.us$/)
  assert.match(body.convite, /^https:\/\/chat\.whatsapp\.com\/\w+$/)
  const group = g.network.group(body.grupoId)!
  assert.equal(group.subject, 'Equipe de vendas')
  assert.deepEqual(
    group.participants.map(p => [p.phone, p.admin]),
    [
      [DEVICE_PHONE, true],
      [FRIEND, false],
      [OTHER, false],
    ],
  )
  assertOk(await g.send({ to: body.grupoId, message: 'bem-vindos' }))
  for (const phone of [FRIEND, OTHER]) assert.equal(g.network.inbox(phone).length, 1)
})

test('create group answers 401 validation.required for a missing name, missing or bad usuarios, or criarGrupo not true', async ({ g }) => {
  const body = { message: 'Grupo', usuarios: FRIEND, criarGrupo: 'true' }
  assertError(await g.groups({ ...body, message: undefined }), 401, 'validation.required')
  assertError(await g.groups({ ...body, message: 'x'.repeat(101) }), 401, 'validation.required')
  assertError(await g.groups({ ...body, usuarios: undefined }), 401, 'validation.required')
  assertError(await g.groups({ ...body, usuarios: '' }), 401, 'validation.required')
  assertError(await g.groups({ ...body, usuarios: 'ana-bia' }), 401, 'validation.required')
  assertError(await g.groups({ ...body, usuarios: `${FRIEND}-123` }), 401, 'validation.required')
  assertError(await g.groups({ ...body, criarGrupo: 'talvez' }), 401, 'validation.required')
})

test('create group takes a name of 100 characters counted as code points: 100 emoji make a group of that name', async ({ g }) => {
  // decisions.md: lengths count code points (an emoji is one, though two UTF-16 units); before, the simulated network counted UTF-16 units and refused it: 400 Mensagem recusada pela rede.
  const name = '🎉'.repeat(100)
  const body = assertOk(await g.groups({ message: name, usuarios: FRIEND, criarGrupo: 'true' }))
  assert.equal(g.network.group(body.grupoId)!.subject, name)
  assertError(await g.groups({ message: name + '🎉', usuarios: FRIEND, criarGrupo: 'true' }), 401, 'validation.required')
})

test('create group answers 401 validation.required for a usuarios entry that is not a phone: a nested list, an object, a flag', async ({ g }) => {
  const body = { message: 'Grupo', criarGrupo: 'true' }
  for (const usuarios of [[[FRIEND]], [[FRIEND, OTHER]], [FRIEND, [OTHER]], `[["${FRIEND}"]]`, [{ phone: FRIEND }], [true]]) {
    assertError(await g.groups({ ...body, usuarios }), 401, 'validation.required')
  }
  assertOk(await g.groups({ ...body, usuarios: [FRIEND, Number(OTHER)] }))
})

test('join by invite adds the device to the group and answers grupoId', async ({ g }) => {
  const group = g.network.createGroup(FRIEND, 'Comunidade', [OTHER])
  const body = assertOk(await g.groups({ message: 'false', entrarConvite: g.network.inviteLink(group.id) }))
  assert.deepEqual(body, { status: 200, message: 'Entrou no grupo.', grupoId: group.id })
  assert.ok(g.network.group(group.id)!.participants.some(p => p.phone === DEVICE_PHONE && !p.admin))
})

test('join by invite answers 404 Convite inválido ou expirado. for an unknown, revoked or malformed invite', async ({ g }) => {
  const group = g.network.createGroup(FRIEND, 'Comunidade', [OTHER])
  const old = g.network.inviteLink(group.id)!
  g.network.revokeInvite(group.id)
  for (const entrarConvite of [old, 'https://chat.whatsapp.com/ZZZZZZZZZZZZZZZZZZZZZZ', 'https://example.com/x', '??']) {
    assertError(await g.groups({ message: 'false', entrarConvite }), 404, BAD_INVITE)
  }
})

test('/api/groups answers 401 validation.required without a distinguishing field or with message not false', async ({ g }) => {
  assertError(await g.groups({ message: 'false' }), 401, 'validation.required')
  assertError(await g.groups({ message: 'true', infoConvite: '120363999999999999@g.us' }), 401, 'validation.required')
  assertError(await g.groups({ infoConvite: '120363999999999999@g.us' }), 401, 'validation.required')
  assertError(await g.groups({ entrarConvite: 'https://chat.whatsapp.com/ZZZZZZZZZZZZZZZZZZZZZZ' }), 401, 'validation.required')
  assertError(await g.groups({ message: 'false', infoConvite: '120363999999999999@g.us', authkey: 'nope' }), 401, 'validation.required')
})

test('group operations answer 404 Nenhum dispositivo encontrado. for an appkey of another account, and 409 when disconnected', async ({ g }) => {
  const other = await g.t.register()
  const { appkey } = await g.t.addDevice(other.authkey, 'outra')
  const group = g.network.createGroup(FRIEND, 'G', [DEVICE_PHONE])
  assertError(await g.groups({ appkey, message: 'false', infoConvite: group.id }), 404, 'Nenhum dispositivo encontrado.')
  assertError(await g.groups({ appkey, message: 'G', usuarios: FRIEND, criarGrupo: 'true' }), 404, 'Nenhum dispositivo encontrado.')
  assertError(await g.groups({ appkey, message: 'false', entrarConvite: g.network.inviteLink(group.id) }), 404, 'Nenhum dispositivo encontrado.')
  await g.network.unlink(g.deviceId)
  assertError(await g.groups({ message: 'G', usuarios: FRIEND, criarGrupo: 'true' }), 409, 'Dispositivo desconectado.')
})

test.run()
