import assert from 'node:assert/strict'
import { assertError, assertOk } from '../messaging.ts'
import type { Case } from './suite.ts'
import { arrived, FRIEND, hooks, OTHER, phoneSends, SHOP, type World } from './world.ts'

/** Operations 21 to 23 with groups the device creates and groups phones create; group traffic both ways. */
export function groupCases(test: Case): void {
  test('operation 22: create group makes the device admin with the usuarios, and a text to it reaches each member; 401 without a name', async world => {
    const body = assertOk(await groups(world, { message: 'Equipe de vendas', usuarios: `+${FRIEND}-${OTHER}`, criarGrupo: 'true' }))
    assert.equal(body.message, 'Grupo criado.')
    assert.match(body.grupoId, /^\d+@g\.us$/)
    const info = assertOk(await groups(world, { message: 'false', infoConvite: body.grupoId }))
    assert.deepEqual(info.grupo, {
      id: body.grupoId,
      titulo: 'Equipe de vendas',
      descricao: '',
      participantes: [
        { id: `${SHOP}@s.whatsapp.net`, admin: true },
        { id: `${FRIEND}@s.whatsapp.net`, admin: false },
        { id: `${OTHER}@s.whatsapp.net`, admin: false },
      ],
    })
    const sent = assertOk(await world.post('/api/create-message', { appkey: world.appkey, authkey: world.authkey, to: body.grupoId, message: 'Oi, equipe' }))
    for (const phone of [FRIEND, OTHER]) {
      assert.deepEqual(await arrived(world, phone, sent.id), { id: sent.id, from: SHOP, type: 'text', text: 'Oi, equipe', group: body.grupoId })
    }
    assertError(await groups(world, { usuarios: FRIEND, criarGrupo: 'true' }), 401, 'validation.required')
  })

  test("operation 21: a phone's group the device is in answers titulo, descricao and participantes with admin flags; 404 for an unknown group", async world => {
    const group = await phoneGroup(world, { creator: FRIEND, subject: 'Clientes VIP', members: [SHOP, OTHER] })
    const body = assertOk(await groups(world, { message: 'false', infoConvite: group }))
    assert.deepEqual(body, {
      status: 200,
      message: 'Grupo encontrado.',
      grupo: {
        id: group,
        titulo: 'Clientes VIP',
        descricao: '',
        participantes: [
          { id: `${FRIEND}@s.whatsapp.net`, admin: true },
          { id: `${SHOP}@s.whatsapp.net`, admin: false },
          { id: `${OTHER}@s.whatsapp.net`, admin: false },
        ],
      },
    })
    assertError(await groups(world, { message: 'false', infoConvite: '120363999999999999@g.us' }), 404, 'Grupo não encontrado.')
  })

  test('a member phone writes in the group: the webhook carries the group as chat, the sender as from', async world => {
    const group = await phoneGroup(world, { creator: FRIEND, subject: 'Conversa', members: [SHOP] })
    const id = await phoneSends(world, { from: FRIEND, to: group, type: 'text', text: 'Bom dia, grupo' })
    const [hook] = await hooks(world, [id])
    assert.deepEqual(
      { event: hook.event, chat: hook.chat, from: hook.from, to: hook.to, isGroup: hook.isGroup, group: hook.group, fromMe: hook.fromMe, text: hook.text },
      { event: 'Texto', chat: group, from: FRIEND, to: group, isGroup: true, group, fromMe: false, text: 'Bom dia, grupo' },
    )
  })

  test('operation 23: joining by the invite link of a group the device is not in answers grupoId; 404 for a bad invite', async world => {
    const group = await phoneGroup(world, { creator: FRIEND, subject: 'Aberto', members: [OTHER] })
    const invite = (await (await fetch(`${world.url}/_sim/invite/${group}`)).json()) as { link: string }
    assert.match(invite.link, /^https:\/\/chat\.whatsapp\.com\/\w+$/)
    const seen = assertOk(await groups(world, { message: 'false', infoConvite: invite.link }))
    assert.deepEqual([seen.grupo.id, seen.grupo.titulo], [group, 'Aberto'])
    const joined = assertOk(await groups(world, { message: 'false', entrarConvite: invite.link }))
    assert.deepEqual(joined, { status: 200, message: 'Entrou no grupo.', grupoId: group })
    const info = assertOk(await groups(world, { message: 'false', infoConvite: group }))
    assert.ok(
      info.grupo.participantes.some((p: { id: string }) => p.id === `${SHOP}@s.whatsapp.net`),
      JSON.stringify(info.grupo),
    )
    assertError(
      await groups(world, { message: 'false', entrarConvite: 'https://chat.whatsapp.com/AAAAAAAAAAAAAAAAAAAAAA' }),
      404,
      'Convite inválido ou expirado.',
    )
  })
}

// --- Internal helpers ---

function groups(world: World, body: Record<string, unknown>) {
  return world.post('/api/groups', { appkey: world.appkey, authkey: world.authkey, ...body })
}

/** `POST /_sim/groups`: a phone creates a group; its id. */
async function phoneGroup(world: World, body: { creator: string; subject: string; members: string[] }): Promise<string> {
  const created = await world.post('/_sim/groups', body)
  assert.equal(created.status, 200, created.text)
  return created.body.group.id
}
