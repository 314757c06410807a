import assert from 'node:assert/strict'
import { TransportError } from '../ports/transport.ts'
import type { ContractCase } from './contract-types.ts'
import { DEVICE, FRIEND, OTHER, PHONE, linkDevice, rejectsWith, waitForMessage } from './contract-helpers.ts'

/** The Transport contract, messages: incoming events, sends of every kind, groups, reactions, deletes, read receipts. */
export function messageCases(it: ContractCase): void {
  it('send on a device that is not connected throws not-connected', async h => {
    await rejectsWith(h.transport.send(DEVICE, FRIEND, { kind: 'text', text: 'hi' }), 'not-connected')
    await h.transport.link(DEVICE, {})
    await rejectsWith(h.transport.send(DEVICE, FRIEND, { kind: 'text', text: 'hi' }), 'not-connected')
  })

  it('send text resolves with the network id and a timestamp, and the network receives it', async h => {
    await linkDevice(h)
    const before = Date.now()
    const sent = await h.transport.send(DEVICE, FRIEND, { kind: 'text', text: 'hello' })
    assert.equal(typeof sent.id, 'string')
    assert.ok(sent.id.length > 0)
    assert.ok(sent.timestamp >= before - 5_000 && sent.timestamp <= Date.now() + 5_000, 'timestamp is milliseconds since the epoch')
    const record = (await h.sent(DEVICE)).find(r => r.id === sent.id)
    assert.deepEqual(record, { id: sent.id, to: FRIEND, kind: 'text', text: 'hello' })
  })

  it('send accepts a network user id as the recipient', async h => {
    await linkDevice(h)
    const sent = await h.transport.send(DEVICE, `${FRIEND}@s.whatsapp.net`, { kind: 'text', text: 'hi' })
    assert.equal((await h.sent(DEVICE)).find(r => r.id === sent.id)?.to, FRIEND)
  })

  it('an incoming text produces a message event in the port shape', async h => {
    await linkDevice(h)
    const mark = h.events.length
    const before = Date.now()
    const id = await h.deliver(DEVICE, { from: FRIEND, content: { kind: 'text', text: 'hi there' } })
    const { message, deviceId } = await waitForMessage(h, mark, id)
    assert.equal(deviceId, DEVICE)
    assert.equal(message.chat, FRIEND)
    assert.equal(message.from, FRIEND)
    assert.equal(message.to, PHONE)
    assert.equal(message.fromMe, false)
    assert.equal(message.isGroup, false)
    assert.equal(message.group, undefined)
    assert.ok(message.timestamp >= before - 5_000 && message.timestamp <= Date.now() + 5_000)
    assert.deepEqual(message.content, { kind: 'text', text: 'hi there' })
  })

  it('groupCreate makes the device admin, and groupInfo by id answers the same group', async h => {
    await linkDevice(h)
    const group = await h.transport.groupCreate(DEVICE, 'Team', [FRIEND, OTHER])
    assert.match(group.id, /^\d+(-\d+)?@g\.us$/)
    assert.equal(group.subject, 'Team')
    const byPhone = new Map(group.participants.map(p => [p.phone ?? p.id.split('@')[0], p.admin]))
    assert.deepEqual(
      [...byPhone].sort(),
      [
        [FRIEND, false],
        [OTHER, false],
        [PHONE, true],
      ].sort(),
    )
    const info = await h.transport.groupInfo(DEVICE, { id: group.id })
    assert.equal(info?.id, group.id)
    assert.equal(info?.subject, 'Team')
    assert.equal(info?.participants.length, 3)
  })

  it('groupInfo of an unknown group is undefined', async h => {
    await linkDevice(h)
    assert.equal(await h.transport.groupInfo(DEVICE, { id: '120363000000000000@g.us' }), undefined)
  })

  it('groupJoin of an invalid invite is undefined', async h => {
    await linkDevice(h)
    assert.equal(await h.transport.groupJoin(DEVICE, 'NoSuchInviteCode123'), undefined)
  })

  it('send to a group the device created reaches the network addressed to the group', async h => {
    await linkDevice(h)
    const group = await h.transport.groupCreate(DEVICE, 'Team', [FRIEND])
    const sent = await h.transport.send(DEVICE, group.id, { kind: 'text', text: 'hello team' })
    assert.deepEqual(
      (await h.sent(DEVICE)).find(r => r.id === sent.id),
      { id: sent.id, to: group.id, kind: 'text', text: 'hello team' },
    )
  })

  it('an incoming group message names the group as chat and the sender as from', async h => {
    await linkDevice(h)
    const group = await h.transport.groupCreate(DEVICE, 'Team', [FRIEND])
    const mark = h.events.length
    const id = await h.deliver(DEVICE, { from: FRIEND, group: group.id, content: { kind: 'text', text: 'hi all' } })
    const { message } = await waitForMessage(h, mark, id)
    assert.equal(message.isGroup, true)
    assert.equal(message.group, group.id)
    assert.equal(message.chat, group.id)
    assert.equal(message.from, FRIEND)
    assert.equal(message.fromMe, false)
  })

  it('a reaction (and its removal) to a message the device sent reaches the network with its emoji and target', async h => {
    await linkDevice(h)
    const sent = await h.transport.send(DEVICE, FRIEND, { kind: 'text', text: 'react to me' })
    const target = { chat: FRIEND, id: sent.id, fromMe: true }
    const reacted = await h.transport.send(DEVICE, FRIEND, { kind: 'reaction', target, emoji: '👍' })
    const removed = await h.transport.send(DEVICE, FRIEND, { kind: 'reaction', target, emoji: '' })
    assert.notEqual(reacted.id, removed.id)
    const records = await h.sent(DEVICE)
    assert.deepEqual(
      records.find(r => r.id === reacted.id),
      { id: reacted.id, to: FRIEND, kind: 'reaction', target: sent.id, emoji: '👍' },
    )
    assert.deepEqual(
      records.find(r => r.id === removed.id),
      { id: removed.id, to: FRIEND, kind: 'reaction', target: sent.id, emoji: '' },
    )
  })

  it('delete of a message the device sent reaches the network naming that message', async h => {
    await linkDevice(h)
    const sent = await h.transport.send(DEVICE, FRIEND, { kind: 'text', text: 'oops' })
    const deleted = await h.transport.send(DEVICE, FRIEND, { kind: 'delete', target: { chat: FRIEND, id: sent.id, fromMe: true } })
    assert.deepEqual(
      (await h.sent(DEVICE)).find(r => r.id === deleted.id),
      { id: deleted.id, to: FRIEND, kind: 'delete', target: sent.id },
    )
  })

  it('markRead of a received message sends a read receipt for it to the network', async h => {
    await linkDevice(h)
    const mark = h.events.length
    const id = await h.deliver(DEVICE, { from: FRIEND, content: { kind: 'text', text: 'read me' } })
    await waitForMessage(h, mark, id)
    assert.deepEqual(await h.receipts(DEVICE), [], 'no receipt before markRead')
    await h.transport.markRead(DEVICE, { chat: FRIEND, id })
    assert.deepEqual(await h.receipts(DEVICE), [{ chat: FRIEND, id }])
  })

  it(
    'markRead of an unknown message throws not-found',
    async h => {
      await linkDevice(h)
      await rejectsWith(h.transport.markRead(DEVICE, { chat: FRIEND, id: '3EB0000000000000DEAD' }), 'not-found')
    },
    'validatesTargets',
  )

  it(
    'a reaction to an unknown message throws not-found',
    async h => {
      await linkDevice(h)
      const target = { chat: FRIEND, id: '3EB0000000000000DEAD' }
      await rejectsWith(h.transport.send(DEVICE, FRIEND, { kind: 'reaction', target, emoji: '👍' }), 'not-found')
    },
    'validatesTargets',
  )

  it(
    'delete of a message the device did not send is refused',
    async h => {
      await linkDevice(h)
      const mark = h.events.length
      const id = await h.deliver(DEVICE, { from: FRIEND, content: { kind: 'text', text: 'mine' } })
      await waitForMessage(h, mark, id)
      const attempt = h.transport.send(DEVICE, FRIEND, { kind: 'delete', target: { chat: FRIEND, id } })
      await assert.rejects(attempt, (err: unknown) => err instanceof TransportError && (err.code === 'not-found' || err.code === 'invalid'))
      await rejectsWith(h.transport.send(DEVICE, FRIEND, { kind: 'delete', target: { chat: FRIEND, id: '3EB0000000000000DEAD' } }), 'not-found')
    },
    'validatesTargets',
  )
}
