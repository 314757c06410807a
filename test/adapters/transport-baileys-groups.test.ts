import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { Boom } from '@hapi/boom'
import type { GroupMetadata } from '@whiskeysockets/baileys'
import { GroupCache } from '../../adapters/transport-baileys/group-cache.ts'
import { linkedBaileys, setupBaileys } from '../helpers/baileys-setup.ts'
import { BOB, ME } from '../helpers/baileys-fixtures.ts'
import { transportRejection } from '../helpers/transport-errors.ts'

const groups = suite('Baileys transport: groups')

const CARLA = '5511777770000'

groups('groupInfo by id: subject, description, participants with phones (LIDs included) and admin flags', async () => {
  const s = await linkedBaileys()
  const group = s.fake.addGroup({
    subject: 'Team',
    invite: 'AbCdEf123456',
    members: [{ phone: ME, admin: true }, { lid: '777@lid', phone: BOB }, { lid: '888@lid' }],
  })
  group.desc = 'our team'
  const info = await s.transport.groupInfo('dev', { id: group.id })
  assert.equal(info, {
    id: group.id,
    subject: 'Team',
    description: 'our team',
    participants: [
      { id: `${ME}@s.whatsapp.net`, phone: ME, admin: true },
      { id: '777@lid', phone: BOB, admin: false },
      { id: '888@lid', admin: false },
    ],
    inviteCode: 'AbCdEf123456',
  })
  const calls = s.fake.current('dev').calls.map(c => c.method)
  assert.equal(calls, ['groupMetadata', 'groupInviteCode'])
  assert.ok(await s.fake.current('dev').config.cachedGroupMetadata!(group.id), 'the metadata feeds cachedGroupMetadata')
  await s.transport.stop()
})

groups('groupInfo by id for a non-admin member asks no invite code; unknown or foreign groups are undefined', async () => {
  const s = await linkedBaileys()
  const member = s.fake.addGroup({ subject: 'Club', members: [{ phone: ME }, { phone: BOB, admin: true }] })
  const foreign = s.fake.addGroup({ subject: 'Other', members: [{ phone: BOB }] })
  const info = await s.transport.groupInfo('dev', { id: member.id })
  assert.is(info?.inviteCode, undefined)
  assert.not.ok(s.fake.current('dev').calls.some(c => c.method === 'groupInviteCode'))
  assert.is(await s.transport.groupInfo('dev', { id: foreign.id }), undefined)
  assert.is(await s.transport.groupInfo('dev', { id: '120363999999999999@g.us' }), undefined)
  assert.is(await s.transport.groupInfo('dev', { id: 'not a group' }), undefined)
  assert.is(await s.transport.groupInfo('dev', { id: `${BOB}@s.whatsapp.net` }), undefined)
  await s.transport.stop()
})

groups('groupInfo by invite link (query stripped) or code previews the group', async () => {
  const s = await linkedBaileys()
  const group = s.fake.addGroup({ subject: 'Open', invite: 'Inv1te0Code22', members: [{ phone: BOB, admin: true }] })
  for (const invite of ['https://chat.whatsapp.com/Inv1te0Code22?mode=ems_copy_t', 'chat.whatsapp.com/invite/Inv1te0Code22', ' Inv1te0Code22 ']) {
    const info = await s.transport.groupInfo('dev', { invite })
    assert.equal(info, { id: group.id, subject: 'Open', participants: [{ id: `${BOB}@s.whatsapp.net`, phone: BOB, admin: true }], inviteCode: 'Inv1te0Code22' })
  }
  const args = s.fake
    .current('dev')
    .calls.filter(c => c.method === 'groupGetInviteInfo')
    .map(c => c.args[0])
  assert.equal(args, ['Inv1te0Code22', 'Inv1te0Code22', 'Inv1te0Code22'])
  await s.transport.stop()
})

groups('invalid, unknown and revoked invites are undefined', async () => {
  const s = await linkedBaileys()
  s.fake.addGroup({ subject: 'Gone', invite: 'RevokedCode1', members: [{ phone: BOB }] })
  s.fake.revokedInvites.add('RevokedCode1')
  assert.is(await s.transport.groupInfo('dev', { invite: 'https://chat.whatsapp.com/UnknownCode9' }), undefined)
  assert.is(await s.transport.groupInfo('dev', { invite: 'RevokedCode1' }), undefined)
  assert.is(await s.transport.groupInfo('dev', { invite: 'https://example.com/x y' }), undefined)
  assert.is(await s.transport.groupJoin('dev', 'https://chat.whatsapp.com/UnknownCode9'), undefined)
  assert.is(await s.transport.groupJoin('dev', 'RevokedCode1'), undefined)
  assert.is(await s.transport.groupJoin('dev', '???'), undefined)
  await s.transport.stop()
})

groups('groupCreate resolves the participants to JIDs and answers the new group with its invite code', async () => {
  const s = await linkedBaileys()
  s.fake.canonical.set('5511977776666', '551177776666')
  const info = await s.transport.groupCreate('dev', 'New team', [BOB, '+55 11 97777-6666', '123@lid'])
  const socket = s.fake.current('dev')
  const create = socket.calls.find(c => c.method === 'groupCreate')
  assert.equal(create?.args, ['New team', [`${BOB}@s.whatsapp.net`, '551177776666@s.whatsapp.net', '123@lid']])
  assert.match(info.id, /^120363\d+@g.us$/)
  assert.is(info.subject, 'New team')
  assert.equal(info.participants[0], { id: `${ME}@s.whatsapp.net`, phone: ME, admin: true })
  assert.is(info.participants.length, 4)
  assert.ok(info.inviteCode)
  await s.transport.stop()
})

groups('groupCreate asks for each member once and never for the device itself (it is the creator)', async () => {
  // Before: the device's own number (or its LID) went to WhatsApp as a participant, and two spellings of
  // one member (with and without the ninth digit, or as a JID) went twice: the device was listed twice.
  const s = await linkedBaileys()
  s.fake.canonical.set('5511977776666', '551177776666')
  const info = await s.transport.groupCreate('dev', 'Team', [`+${ME}`, BOB, `${BOB}@s.whatsapp.net`, '5511977776666', '551177776666'])
  assert.equal(s.fake.current('dev').calls.find(c => c.method === 'groupCreate')?.args, ['Team', [`${BOB}@s.whatsapp.net`, '551177776666@s.whatsapp.net']])
  assert.equal(
    info.participants.map(p => p.id),
    [`${ME}@s.whatsapp.net`, `${BOB}@s.whatsapp.net`, '551177776666@s.whatsapp.net'],
  )
  await s.transport.stop()
})

groups('a member WhatsApp could not add at creation is not among the participants later group sends encrypt for', async () => {
  // WhatsApp's answer to a create lists every participant asked for, those it could not add (privacy:
  // invited instead) with an error code Baileys drops. It was cached: for an hour, sends to the new
  // group went (their sender key included) to people who are not in it.
  const s = await linkedBaileys()
  const info = await s.transport.groupCreate('dev', 'Team', [BOB, CARLA])
  const group = s.fake.groups.get(info.id)!
  group.participants = group.participants.filter(p => p.id !== `${CARLA}@s.whatsapp.net`) // Carla's add was refused
  await s.transport.send('dev', info.id, { kind: 'text', text: 'oi' })
  const cached = await s.fake.current('dev').config.cachedGroupMetadata!(info.id)
  assert.equal(
    cached?.participants.map(p => p.id),
    [`${ME}@s.whatsapp.net`, `${BOB}@s.whatsapp.net`],
  )
  await s.transport.stop()
})

groups('groupCreate looks up many members in a few number lookups, not one round trip each', async () => {
  // Before: one onWhatsApp (a USync round trip to WhatsApp) per member, one after the other: 1 023 members
  // took 1 023 round trips, far past the 30 s a group operation may take at WhatsApp's latency (504, and
  // the group still created afterwards, so a retry made a second one), in a burst of queries WhatsApp rate-limits.
  const s = await linkedBaileys()
  const members = Array.from({ length: 300 }, (_, i) => `55119${String(10_000_000 + i)}`)
  s.fake.canonical.set(members[7]!, members[7]!.slice(0, 4) + members[7]!.slice(5)) // registered without the ninth digit
  s.fake.notOnWhatsApp.add(members[9]!) // not on WhatsApp under that form...
  s.fake.canonical.set(members[9]!.slice(0, 4) + members[9]!.slice(5), members[9]!.slice(0, 4) + members[9]!.slice(5)) // ...but without the ninth digit
  await s.transport.groupCreate('dev', 'Muitos', members)
  const socket = s.fake.current('dev')
  const lookups = socket.calls.filter(c => c.method === 'onWhatsApp')
  assert.ok(lookups.length <= 6, `${lookups.length} number lookups for 300 members`)
  const asked = socket.calls.find(c => c.method === 'groupCreate')?.args[1] as string[]
  assert.is(asked.length, 300)
  assert.equal(asked[7], `${members[7]!.slice(0, 4) + members[7]!.slice(5)}@s.whatsapp.net`)
  assert.equal(asked[9], `${members[9]!.slice(0, 4) + members[9]!.slice(5)}@s.whatsapp.net`)
  assert.equal(
    asked.slice(10),
    members.slice(10).map(m => `${m}@s.whatsapp.net`),
  )
  await s.transport.stop()
})

groups('groupCreate refuses a participant not on WhatsApp (not-found) or a group id (invalid)', async () => {
  const s = await linkedBaileys()
  s.fake.notOnWhatsApp.add('15550001111')
  await transportRejection(s.transport.groupCreate('dev', 'X', ['15550001111']), 'not-found')
  await transportRejection(s.transport.groupCreate('dev', 'X', ['120363000000000001@g.us']), 'invalid')
  await transportRejection(s.transport.groupCreate('dev', '', [BOB]), 'invalid')
  assert.not.ok(s.fake.current('dev').calls.some(c => c.method === 'groupCreate'))
  await s.transport.stop()
})

groups('groupJoin accepts an invite link and answers the group id', async () => {
  const s = await linkedBaileys()
  const group = s.fake.addGroup({ subject: 'Join me', invite: 'JoinCode1234', members: [{ phone: CARLA, admin: true }] })
  assert.is(await s.transport.groupJoin('dev', 'https://chat.whatsapp.com/JoinCode1234?mode=r_t'), group.id)
  assert.equal(s.fake.current('dev').calls.find(c => c.method === 'groupAcceptInvite')?.args, ['JoinCode1234'])
  assert.ok(await s.transport.groupInfo('dev', { id: group.id }), 'now a member')
  await s.transport.stop()
})

groups('group errors: rate-overlimit is rate-limited, a stalled call times out, a closed device is not-connected', async () => {
  const s = await setupBaileys({ sendTimeoutMs: 50 })
  await transportRejection(s.transport.groupInfo('dev', { id: '120363000000000001@g.us' }), 'not-connected')
  await transportRejection(s.transport.groupCreate('dev', 'x', []), 'not-connected')
  await transportRejection(s.transport.groupJoin('dev', 'Code12345678'), 'not-connected')
  await s.linked('dev', ME)
  const group = s.fake.addGroup({ subject: 'G', members: [{ phone: ME }] })
  s.fake.failNext('groupMetadata', new Boom('rate-overlimit', { data: 429 }))
  await transportRejection(s.transport.groupInfo('dev', { id: group.id }), 'rate-limited')
  s.fake.failNext('groupCreate', new Boom('rate-overlimit', { data: 429 }))
  await transportRejection(s.transport.groupCreate('dev', 'x', [BOB]), 'rate-limited')
  s.fake.hanging.add('groupAcceptInvite')
  await transportRejection(s.transport.groupJoin('dev', 'Code12345678'), 'timeout')
  await s.transport.stop()
})

groups('group sends fetch the metadata once (concurrent sends share it); group events keep it current without asking WhatsApp', async () => {
  const s = await linkedBaileys()
  const group = s.fake.addGroup({ subject: 'Busy', members: [{ phone: ME }, { phone: BOB }] })
  const lookups = () => s.fake.current('dev').calls.filter(c => c.method === 'groupMetadata').length
  await Promise.all([1, 2, 3].map(n => s.transport.send('dev', group.id, { kind: 'text', text: `m${n}` })))
  await s.transport.send('dev', group.id, { kind: 'text', text: 'm4' })
  assert.is(lookups(), 1, 'one fetch for four sends')
  const socket = s.fake.current('dev')
  socket.ev.emit('group-participants.update', {
    id: group.id,
    author: `${ME}@s.whatsapp.net`,
    participants: [{ id: '998877@lid', phoneNumber: `${CARLA}@s.whatsapp.net`, admin: null }],
    action: 'add',
  })
  socket.ev.emit('group-participants.update', {
    id: group.id,
    author: `${ME}@s.whatsapp.net`,
    participants: [{ id: `${BOB}@s.whatsapp.net`, admin: null }],
    action: 'promote',
  })
  socket.ev.emit('groups.update', [{ id: group.id, subject: 'Renamed', author: `${BOB}@s.whatsapp.net` }])
  const cached = await socket.config.cachedGroupMetadata!(group.id)
  assert.is(cached?.subject, 'Renamed')
  assert.not.ok('author' in (cached ?? {}), "the change's author is not group metadata")
  assert.equal(
    cached?.participants.map(p => [p.id, p.admin ?? null]),
    [
      [`${ME}@s.whatsapp.net`, null],
      [`${BOB}@s.whatsapp.net`, 'admin'],
      ['998877@lid', null],
    ],
  )
  socket.ev.emit('group-participants.update', { id: group.id, author: `${BOB}@s.whatsapp.net`, participants: [{ id: '998877@lid' }], action: 'remove' })
  await s.transport.send('dev', group.id, { kind: 'text', text: 'm5' })
  assert.equal(
    (await socket.config.cachedGroupMetadata!(group.id))?.participants.map(p => p.id),
    [`${ME}@s.whatsapp.net`, `${BOB}@s.whatsapp.net`],
  )
  assert.is(lookups(), 1, 'still one fetch: the events were applied to the cached copy')
  socket.ev.emit('group-participants.update', {
    id: group.id,
    author: `${BOB}@s.whatsapp.net`,
    participants: [{ id: `${ME}@s.whatsapp.net` }],
    action: 'remove',
  })
  await socket.config.cachedGroupMetadata!(group.id)
  assert.is(lookups(), 2, 'the device itself removed: the entry was dropped, so the next lookup asks WhatsApp')
  await s.transport.stop()
})

groups('a participant change that arrives while the metadata is being fetched is not lost under the fetched (older) list', async () => {
  // The fetch answered with the list from before the change; cached for an hour, later sends to the
  // group left the new member out (Baileys encrypts for the cached participants only).
  const cache = new GroupCache()
  const group = '120363000000000001@g.us'
  let answer!: (metadata: GroupMetadata) => void
  const looked = cache.lookup(group, () => new Promise<GroupMetadata>(resolve => (answer = resolve)))
  cache.applyParticipants({ id: group, author: `${BOB}@s.whatsapp.net`, action: 'add', participants: [{ id: `${CARLA}@s.whatsapp.net`, admin: null }] }, [])
  answer({ id: group, subject: 'Loja', owner: undefined, participants: [{ id: `${BOB}@s.whatsapp.net`, admin: 'admin' }] } as GroupMetadata)
  await looked
  const cached = cache.get(group)
  assert.ok(
    !cached || cached.participants.some(p => p.id === `${CARLA}@s.whatsapp.net`),
    `the cached list misses the member added during the fetch: ${JSON.stringify(cached?.participants)}`,
  )
})

groups.run()
