import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { TransportError } from '../../src/ports/transport.ts'
import type { Button, IncomingMessage } from '../../src/ports/transport.ts'
import { MemoryNetwork } from '../../adapters/transport-memory/index.ts'
import type { InboxEntry } from '../../adapters/transport-memory/index.ts'
import { linkAs, memoryHarness } from './memory-harness.ts'

const PHONE = '5511999990001'
const FRIEND = '5511988880002'
const OTHER = '5511977770003'
const code = (c: TransportError['code']) => (err: unknown) => err instanceof TransportError && err.code === c
/** Inbox entries without their generated id and timestamp. */
const contents = (entries: InboxEntry[]) => entries.map(({ id, timestamp, ...rest }) => rest)
const messages = (h: { events: { type: string }[] }) =>
  h.events.filter((e): e is { type: 'message'; deviceId: string; message: IncomingMessage } => e.type === 'message').map(e => e.message)

async function linked() {
  const h = await memoryHarness()
  await linkAs(h, 'd1', PHONE)
  return h
}

/** Two harnesses on one network: device `da` of the first linked as PHONE, `db` of the second as FRIEND. */
async function twoGateways() {
  const a = await memoryHarness()
  const b = await memoryHarness({ network: a.network })
  await linkAs(a, 'da', PHONE)
  await linkAs(b, 'db', FRIEND)
  return [a, b] as const
}

const inbox = suite('transport-memory: inboxes')

inbox('every send kind lands in the recipient inbox with the field names of DESIGN.md', async () => {
  const h = await linked()
  const png = { data: Buffer.from('png-bytes'), mimetype: 'image/png', fileName: 'a.png' }
  const reply: Button[] = [
    { type: 'reply', id: 'yes', text: 'Yes' },
    { type: 'url', text: 'Site', url: 'https://example.com' },
  ]
  const first = await h.transport.send('d1', FRIEND, { kind: 'text', text: 'hello' })
  await h.transport.send('d1', FRIEND, { kind: 'media', media: 'image', file: png, caption: 'a picture' })
  await h.transport.send('d1', FRIEND, { kind: 'media', media: 'audio', file: { data: Buffer.alloc(3), mimetype: 'audio/ogg' }, voiceNote: true })
  await h.transport.send('d1', FRIEND, { kind: 'media', media: 'document', file: { data: Buffer.alloc(10), mimetype: 'application/pdf', fileName: 'r.pdf' } })
  await h.transport.send('d1', FRIEND, { kind: 'contact', name: 'Ana', phone: '+55 11 97777-0003' })
  await h.transport.send('d1', FRIEND, { kind: 'location', latitude: -23.5, longitude: -46.6, text: 'Here' })
  await h.transport.send('d1', FRIEND, { kind: 'buttons', text: 'Pick', header: 'H', footer: 'F', buttons: reply })
  await h.transport.send('d1', FRIEND, {
    kind: 'carousel',
    text: 'Cards',
    cards: [{ image: png, title: 'One', buttons: [{ type: 'call', text: 'Call', phone: OTHER }] }],
  })
  const target = { chat: FRIEND, id: first.id, fromMe: true }
  await h.transport.send('d1', FRIEND, { kind: 'reaction', target, emoji: '👍' })
  await h.transport.send('d1', FRIEND, { kind: 'reaction', target, emoji: '' })
  await h.transport.send('d1', FRIEND, { kind: 'delete', target })
  const from = PHONE
  assert.deepEqual(contents(h.network.inbox(FRIEND)), [
    { from, type: 'text', text: 'hello' },
    { from, type: 'image', caption: 'a picture', fileName: 'a.png', mimetype: 'image/png', bytes: 9 },
    { from, type: 'audio', mimetype: 'audio/ogg', bytes: 3, voiceNote: true },
    { from, type: 'document', fileName: 'r.pdf', mimetype: 'application/pdf', bytes: 10 },
    { from, type: 'contact', name: 'Ana', phone: OTHER },
    { from, type: 'location', latitude: -23.5, longitude: -46.6, text: 'Here' },
    { from, type: 'buttons', text: 'Pick', header: 'H', footer: 'F', buttons: reply },
    {
      from,
      type: 'carousel',
      text: 'Cards',
      cards: [{ title: 'One', image: { mimetype: 'image/png', fileName: 'a.png', bytes: 9 }, buttons: [{ type: 'call', text: 'Call', phone: OTHER }] }],
    },
    { from, type: 'reaction', target: first.id, emoji: '👍' },
    { from, type: 'reaction', target: first.id, emoji: '' },
    { from, type: 'delete', target: first.id },
  ])
  const entry = h.network.inbox(FRIEND)[0]
  assert.match(entry.id, /^3EB0[0-9A-F]{16}$/)
  assert.equal(Object.keys(entry).slice(0, 3).join(), 'id,from,type')
  await h.close()
})

inbox('a deleted message is no longer a valid target', async () => {
  const h = await linked()
  const sent = await h.transport.send('d1', FRIEND, { kind: 'text', text: 'x' })
  await h.transport.send('d1', FRIEND, { kind: 'delete', target: { chat: FRIEND, id: sent.id } })
  await assert.rejects(h.transport.send('d1', FRIEND, { kind: 'reaction', target: { chat: FRIEND, id: sent.id }, emoji: '👍' }), code('not-found'))
  await h.close()
})

inbox('a plus sign, spaces, dashes and user ids address the same phone', async () => {
  const h = await linked()
  for (const to of [`+${FRIEND}`, '+55 11 98888-0002', `${FRIEND}@s.whatsapp.net`, `${FRIEND}:3@s.whatsapp.net`]) {
    await h.transport.send('d1', to, { kind: 'text', text: to })
  }
  assert.equal(h.network.inbox(FRIEND).length, 4)
  await h.close()
})

inbox('content the network refuses throws invalid', async () => {
  const h = await linked()
  const refused = [
    h.transport.send('d1', 'not a phone', { kind: 'text', text: 'x' }),
    h.transport.send('d1', FRIEND, { kind: 'text', text: '' }),
    h.transport.send('d1', FRIEND, { kind: 'location', latitude: 91, longitude: 0 }),
    h.transport.send('d1', FRIEND, { kind: 'buttons', text: 'x', buttons: [] }),
    h.transport.send('d1', FRIEND, { kind: 'contact', name: 'A', phone: 'nope' }),
    h.transport.groupCreate('d1', '', [FRIEND]),
    h.transport.groupCreate('d1', 'G', ['nope']),
  ]
  for (const attempt of refused) await assert.rejects(attempt, code('invalid'))
  assert.deepEqual(h.network.inbox(FRIEND), [])
  await h.close()
})

inbox('markRead puts a read receipt into the sender’s inbox, only for received messages', async () => {
  const h = await linked()
  const id = await h.network.sendFromPhone(FRIEND, PHONE, { type: 'text', text: 'hi' })
  await h.transport.markRead('d1', { chat: `+${FRIEND}`, id })
  assert.deepEqual(contents(h.network.inbox(FRIEND)), [{ from: PHONE, type: 'read', target: id }])
  await assert.rejects(h.transport.markRead('d1', { chat: OTHER, id }), code('not-found'), 'wrong chat')
  const own = await h.transport.send('d1', FRIEND, { kind: 'text', text: 'mine' })
  await assert.rejects(h.transport.markRead('d1', { chat: FRIEND, id: own.id }), code('not-found'), 'own message')
  await h.close()
})

inbox('inboxes and the message log are bounded, oldest first out', async () => {
  const network = new MemoryNetwork({ inboxLimit: 3, logLimit: 2, phoneLimit: 2 })
  const h = await memoryHarness({ network })
  await linkAs(h, 'd1', PHONE)
  const ids: string[] = []
  for (let i = 0; i < 5; i++) ids.push((await h.transport.send('d1', FRIEND, { kind: 'text', text: `m${i}` })).id)
  assert.deepEqual(
    h.network.inbox(FRIEND).map(e => e.type === 'text' && e.text),
    ['m2', 'm3', 'm4'],
  )
  await assert.rejects(h.transport.send('d1', FRIEND, { kind: 'reaction', target: { chat: FRIEND, id: ids[2] }, emoji: '👍' }), code('not-found'))
  await h.transport.send('d1', FRIEND, { kind: 'reaction', target: { chat: FRIEND, id: ids[4] }, emoji: '👍' })
  await h.transport.send('d1', OTHER, { kind: 'text', text: 'a' })
  await h.transport.send('d1', '5511966660004', { kind: 'text', text: 'b' })
  assert.deepEqual(h.network.inbox(FRIEND), [], 'the least recently written inbox was dropped')
  await h.close()
})

const traffic = suite('transport-memory: devices, groups and LIDs')

traffic('two gateways on one network message each other', async () => {
  const [a, b] = await twoGateways()
  const sent = await a.transport.send('da', FRIEND, { kind: 'media', media: 'image', file: { data: Buffer.from('hi'), mimetype: 'image/png' }, caption: 'c' })
  await a.network.settled()
  const [received] = messages(b)
  assert.deepEqual(received, {
    id: sent.id,
    isGroup: false,
    timestamp: sent.timestamp,
    chat: PHONE,
    from: PHONE,
    to: FRIEND,
    fromMe: false,
    content: { kind: 'image', caption: 'c', mimetype: 'image/png', base64: Buffer.from('hi').toString('base64') },
  })
  await b.transport.send('db', PHONE, { kind: 'reaction', target: { chat: PHONE, id: sent.id }, emoji: '❤️' })
  await a.network.settled()
  assert.deepEqual(
    messages(a).map(m => m.content),
    [{ kind: 'reaction', target: sent.id, emoji: '❤️' }],
  )
  assert.equal(messages(b).length, 1, 'a device gets no copy of its own send')
  await a.close()
  await b.close()
})

traffic('a device send does not wait for the receiving gateway to record it', async () => {
  const [a, b] = await twoGateways()
  let release = () => {}
  const recorded = new Promise<void>(resolve => (release = resolve))
  b.context.emit = async event => {
    await recorded
    b.events.push(event)
  }
  const first = await a.transport.send('da', FRIEND, { kind: 'text', text: 'one' })
  const second = await a.transport.send('da', FRIEND, { kind: 'text', text: 'two' })
  assert.deepEqual(messages(b), [])
  release()
  await a.network.settled()
  assert.deepEqual(
    messages(b).map(m => m.id),
    [first.id, second.id],
    'in order',
  )
  await a.close()
  await b.close()
})

traffic('a message sent from the linked phone reaches its device as fromMe', async () => {
  const h = await linked()
  const id = await h.network.sendFromPhone(PHONE, FRIEND, { type: 'text', text: 'from my phone' })
  assert.deepEqual(
    messages(h).map(m => [m.id, m.fromMe, m.chat, m.to]),
    [[id, true, FRIEND, FRIEND]],
  )
  await h.close()
})

traffic('a group send reaches every member but the sender, devices included', async () => {
  const [a, b] = await twoGateways()
  const group = await a.transport.groupCreate('da', 'Team', [FRIEND, OTHER])
  const sent = await a.transport.send('da', group.id, { kind: 'text', text: 'all' })
  for (const phone of [FRIEND, OTHER]) assert.deepEqual(contents(a.network.inbox(phone)), [{ from: PHONE, type: 'text', text: 'all', group: group.id }])
  assert.deepEqual(a.network.inbox(PHONE), [])
  await a.network.settled()
  const [received] = messages(b)
  assert.deepEqual(
    [received.id, received.chat, received.from, received.to, received.isGroup, received.group],
    [sent.id, group.id, PHONE, group.id, true, group.id],
  )
  await b.transport.markRead('db', { chat: group.id, id: sent.id, participant: PHONE })
  assert.deepEqual(contents(a.network.inbox(PHONE)), [{ from: FRIEND, type: 'read', target: sent.id, group: group.id }])
  await a.close()
  await b.close()
})

traffic('a group the device is not in is not found, by send or by id', async () => {
  const h = await linked()
  const group = h.network.createGroup(FRIEND, 'Theirs', [OTHER])
  await assert.rejects(h.transport.send('d1', group.id, { kind: 'text', text: 'x' }), code('not-found'))
  assert.equal(await h.transport.groupInfo('d1', { id: group.id }), undefined)
  await assert.rejects(h.network.sendFromPhone(PHONE, group.id, { type: 'text', text: 'x' }), code('not-found'))
  await h.close()
})

traffic('invites: info by code or link, join, and revoked links stop working', async () => {
  const h = await linked()
  const group = h.network.createGroup(FRIEND, 'Club', [OTHER], { description: 'About' })
  const link = h.network.inviteLink(group.id)!
  assert.equal(link, `https://chat.whatsapp.com/${group.inviteCode}`)
  const byLink = await h.transport.groupInfo('d1', { invite: `${link}?utm=x` })
  assert.deepEqual(byLink, { ...group, inviteCode: group.inviteCode })
  assert.equal((await h.transport.groupInfo('d1', { invite: group.inviteCode! }))?.id, group.id)
  assert.equal(await h.transport.groupJoin('d1', link), group.id)
  const info = await h.transport.groupInfo('d1', { id: group.id })
  assert.deepEqual(info?.participants.at(-1), { id: `${PHONE}@s.whatsapp.net`, phone: PHONE, admin: false })
  assert.equal(info?.inviteCode, undefined, 'members who are not admins do not see the invite code')
  await h.transport.send('d1', group.id, { kind: 'text', text: 'joined' })
  assert.equal(h.network.inbox(FRIEND).length, 1)
  h.network.revokeInvite(group.id)
  assert.equal(await h.transport.groupJoin('d1', link), undefined)
  assert.equal(await h.transport.groupInfo('d1', { invite: link }), undefined)
  await h.close()
})

traffic('button taps and phone deletes are checked against the log', async () => {
  const h = await linked()
  const buttons = await h.transport.send('d1', FRIEND, { kind: 'buttons', text: 'Pick', buttons: [{ type: 'reply', id: 'y', text: 'Yes' }] })
  const text = await h.transport.send('d1', FRIEND, { kind: 'text', text: 'plain' })
  const tap = await h.network.sendFromPhone(FRIEND, PHONE, { type: 'button', target: buttons.id, buttonId: 'y', text: 'Yes' })
  assert.deepEqual(messages(h).at(-1)?.content, { kind: 'button', target: buttons.id, buttonId: 'y', text: 'Yes' })
  assert.ok(tap)
  await assert.rejects(h.network.sendFromPhone(FRIEND, PHONE, { type: 'button', target: text.id, buttonId: 'y' }), code('invalid'))
  await assert.rejects(h.network.sendFromPhone(FRIEND, PHONE, { type: 'delete', target: text.id }), code('invalid'))
  await h.close()
})

traffic('LIDs: registered phones carry fromLid; hidden numbers show only the LID', async () => {
  const h = await linked()
  const lid = h.network.registerPhone(FRIEND, { lid: true, pushName: 'Friend' })!
  assert.match(lid, /^\d{15}@lid$/)
  assert.equal(h.network.registerPhone(FRIEND, { lid: true }), lid, 'deterministic')
  await h.network.sendFromPhone(FRIEND, PHONE, { type: 'text', text: 'a' })
  h.network.registerPhone(OTHER, { lid: '123456789012345@lid', hidePhone: true })
  const hidden = await h.network.sendFromPhone(OTHER, PHONE, { type: 'text', text: 'b' })
  const [shown, masked] = messages(h)
  assert.deepEqual([shown.from, shown.fromLid, shown.chat], [FRIEND, lid, FRIEND])
  assert.deepEqual([masked.from, masked.fromLid, masked.chat], [undefined, '123456789012345@lid', '123456789012345@lid'])
  await h.transport.markRead('d1', { chat: '123456789012345@lid', id: hidden })
  await h.transport.send('d1', '123456789012345@lid', { kind: 'text', text: 'to a lid' })
  assert.equal(h.network.inbox(OTHER).length, 2)
  await assert.rejects(h.transport.send('d1', '999999999999999@lid', { kind: 'text', text: 'x' }), code('not-found'))
  h.network.registerPhone(PHONE, { lid: true })
  assert.match((await h.transport.status('d1')).lid ?? '', /@lid$/)
  await h.close()
})

inbox.run()
traffic.run()
