import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { waitFor } from '../helpers/gateway.ts'
import { startRealStack, type RealStack } from '../helpers/real-stack.ts'

/**
 * Groups on the real Baileys stack against the local WhatsApp peer, through the whole gateway:
 * operation 22 creates a group (`w:g2` create), a text to the group goes out as one skmsg plus the
 * sender key distribution message pairwise to each member phone, which decrypts exactly that text; a
 * member phone's group message (its own sender key) becomes a webhook with the group and the sender;
 * operation 21 and 23 read the group and join by invite.
 */
const groups = suite<World>('groups on the real Baileys stack against the local WhatsApp peer')

const SHOP = '5511999990001'
const ANA = '5511988880002'
const BETO = '5511977770003'

interface World extends RealStack {
  groupId: string
}

groups.before(async world => {
  Object.assign(world, await startRealStack())
})

groups.after(async world => {
  await world.close?.()
})

groups('operation 22 creates the group on the network with the device as admin and both phones as members, and answers its invite link', async world => {
  const { t, peer, authkey, device } = world
  peer.phone(ANA, { pushName: 'Ana' })
  peer.phone(BETO, { pushName: 'Beto' })
  const created = await t.post('/api/groups', { appkey: device.appkey, authkey, message: 'Clientes', usuarios: `${ANA}-${BETO}`, criarGrupo: 'true' })
  assert.is(created.status, 200, created.text)
  world.groupId = created.body.grupoId
  const group = peer.group(world.groupId)
  assert.ok(group, `the peer knows ${world.groupId}`)
  assert.equal([group!.subject, group!.members.sort(), group!.admins], ['Clientes', [ANA, BETO, SHOP].sort(), [SHOP]])
  assert.is(created.body.convite, `https://chat.whatsapp.com/${group!.inviteCode}`)
  assert.equal(
    peer.records.unknownIqs.map(iq => iq.attrs.xmlns),
    [],
  )
})

groups('a text to the group: each member phone takes in the sender key and decrypts exactly that text (skmsg)', async world => {
  const { t, peer, authkey, device, groupId } = world
  const sent = await t.post('/api/create-message', { appkey: device.appkey, authkey, to: groupId, message: 'Promoção de hoje' })
  assert.is(sent.status, 200, sent.text)
  for (const pn of [ANA, BETO]) {
    const phone = peer.phone(pn)
    await waitFor(
      () => phone.inbox.some(m => m.id === sent.body.id),
      10_000,
      `${pn} to decrypt the group message (problems: ${peer.records.problems.join('; ')})`,
    )
    const got = phone.inbox.find(m => m.id === sent.body.id)!
    assert.equal(
      [got.message.extendedTextMessage?.text ?? got.message.conversation, got.to, got.from, got.encryption],
      ['Promoção de hoje', groupId, SHOP, 'skmsg'],
    )
  }
  const second = await t.post('/api/create-message', { appkey: device.appkey, authkey, to: groupId, message: 'Segunda mensagem' })
  assert.is(second.status, 200, second.text)
  await waitFor(() => peer.phone(BETO).inbox.some(m => m.id === second.body.id), 10_000, 'the second message, under the same sender key')
  assert.equal(peer.records.problems, [])
})

groups('a member phone sends to the group: the webhook shows the text with the group id and the sender', async world => {
  const { peer, receiver, device, groupId } = world
  const ana = peer.phone(ANA)
  const sent = ana.sendGroupText(groupId, 'Quero dois')
  const find = () => receiver.hooks.map(h => h.payload).find(p => p?.idMessagem === sent.id)
  await waitFor(() => !!find(), 10_000, `the webhook of ${sent.id} (problems: ${peer.records.problems.join('; ')})`)
  const hook = find()
  assert.equal(
    {
      event: hook.event,
      device: hook.device,
      chat: hook.chat,
      from: hook.from,
      fromLid: hook.fromLid,
      pushName: hook.pushName,
      fromMe: hook.fromMe,
      isGroup: hook.isGroup,
      group: hook.group,
      text: hook.text,
    },
    {
      event: 'Texto',
      device: device.id,
      chat: groupId,
      from: ANA,
      fromLid: ana.lid,
      pushName: 'Ana',
      fromMe: false,
      isGroup: true,
      group: groupId,
      text: 'Quero dois',
    },
  )
  const again = ana.sendGroupText(groupId, 'E mais um')
  await waitFor(() => receiver.hooks.some(h => h.payload?.idMessagem === again.id), 10_000, 'a second message under the same sender key (skmsg only)')
  assert.equal(peer.records.problems, [])
})

groups(
  'operation 21 reads the group by id and by invite; operation 23 joins by invite a group a phone made; a phone added by the admin gets the next message of the device; the device removed by the admin no longer reads the group',
  async world => {
    const { t, peer, authkey, device, groupId } = world
    const info = await t.post('/api/groups', { appkey: device.appkey, authkey, message: 'false', infoConvite: groupId })
    assert.is(info.status, 200, info.text)
    assert.equal([info.body.grupo.titulo, info.body.grupo.participantes.length], ['Clientes', 3])
    const invite = `https://chat.whatsapp.com/${peer.group(groupId)!.inviteCode}`
    const preview = await t.post('/api/groups', { appkey: device.appkey, authkey, message: 'false', infoConvite: invite })
    assert.equal([preview.status, preview.body.grupo?.id], [200, groupId])

    // A second group, made by a phone: the device joins it by invite, then gets a member's message.
    const ana = peer.phone(ANA)
    const carlos = peer.phone('5511966660004', { pushName: 'Carlos' })
    const bazaar = ana.createGroup('Bazar', carlos)
    const joined = await t.post('/api/groups', {
      appkey: device.appkey,
      authkey,
      message: 'false',
      entrarConvite: `https://chat.whatsapp.com/${peer.group(bazaar)!.inviteCode}`,
    })
    assert.equal([joined.status, joined.body.grupoId], [200, bazaar], joined.text)
    assert.ok(peer.group(bazaar)!.members.includes(SHOP))
    const hello = carlos.sendGroupText(bazaar, 'Bem-vinda')
    await waitFor(
      () => world.receiver.hooks.some(h => h.payload?.idMessagem === hello.id && h.payload?.group === bazaar),
      10_000,
      'the message in the joined group',
    )

    // The admin phone adds a phone: the device applies the w:gp2 notification to the group metadata it
    // caches for sends, so its next message carries the sender key to the new member, who decrypts it.
    const dora = peer.phone('5511955550005', { pushName: 'Dora' })
    ana.addToGroup(bazaar, dora)
    await waitFor(
      () => peer.records.nodes.some(n => n.tag === 'ack' && n.attrs.class === 'notification' && n.attrs.to === bazaar),
      10_000,
      'the device to ack the add notification',
    )
    const toAll = await t.post('/api/create-message', { appkey: device.appkey, authkey, to: bazaar, message: 'Oi, Dora' })
    assert.is(toAll.status, 200, toAll.text)
    await waitFor(() => dora.inbox.some(m => m.id === toAll.body.id), 10_000, `the new member to decrypt (problems: ${peer.records.problems.join('; ')})`)
    assert.is(
      dora.inbox.find(m => m.id === toAll.body.id)!.message.extendedTextMessage?.text ?? dora.inbox.find(m => m.id === toAll.body.id)!.message.conversation,
      'Oi, Dora',
    )

    // The admin phone removes the device's account: the device is told, and a send is refused by the peer.
    ana.removeFromGroup(bazaar, SHOP)
    assert.not.ok(peer.group(bazaar)!.members.includes(SHOP))
    const refused = await t.post('/api/groups', { appkey: device.appkey, authkey, message: 'false', infoConvite: bazaar })
    assert.is(refused.status, 404, refused.text)
    assert.equal(peer.records.problems, [])
  },
)

groups(
  'operation 23 on a group that requires admin approval: WhatsApp takes a join request; 200 with the group id and a message that it awaits approval, the device no member',
  async world => {
    const { t, peer, authkey, device } = world
    const ana = peer.phone(ANA)
    const club = ana.createGroup('Clube', peer.phone(BETO))
    peer.requireJoinApproval(club)
    const asked = await t.post('/api/groups', {
      appkey: device.appkey,
      authkey,
      message: 'false',
      entrarConvite: `https://chat.whatsapp.com/${peer.group(club)!.inviteCode}`,
    })
    assert.equal(
      [asked.status, asked.body.status, asked.body.grupoId, asked.body.message],
      [200, 200, club, 'Pedido de entrada enviado; aguarda aprovação de um administrador do grupo.'],
      asked.text,
    )
    assert.equal([peer.group(club)!.members.includes(SHOP), peer.group(club)!.joinRequests], [false, [SHOP]])
    assert.equal(peer.records.problems, [])
  },
)

groups.run()
