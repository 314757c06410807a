import assert from 'node:assert/strict'
import { waitFor } from '../gateway.ts'
import { assertError, assertOk } from '../messaging.ts'
import type { Case } from './suite.ts'
import { arrived, FRIEND, hooks, inbox, OTHER, phoneSends, send, SHOP } from './world.ts'

const NOT_IN_CHAT = 'Mensagem não encontrada nesta conversa.'
/** A phone that shows the device its LID (a phone of its own: the other cases see FRIEND and OTHER by number only). */
const WITH_LID = '5511955550005'

/** Operations 12 to 14 (react, delete, mark as read) and the acks of a send: server ack, delivery, read, error ack. */
export function actionCases(test: Case): void {
  test('operation 12: react delivers the emoji with the target id, remove an empty emoji; 404 for an unknown target', async world => {
    const sent = assertOk(await send(world, { to: FRIEND, message: 'para reagir' })).id
    const body = assertOk(await send(world, { to: FRIEND, reactionMessage: 'true', message: '❤️', id: sent }))
    assert.equal(body.message, 'Reação enviada.')
    assert.deepEqual(await arrived(world, FRIEND, body.id), { id: body.id, from: SHOP, type: 'reaction', target: sent, emoji: '❤️' })
    const received = await phoneSends(world, { from: FRIEND, to: SHOP, type: 'text', text: 'oi' })
    await hooks(world, [received])
    const removed = assertOk(await send(world, { to: FRIEND, reactionMessage: '1', message: 'remove', id: received }))
    assert.equal(removed.message, 'Reação removida.')
    assert.deepEqual(await arrived(world, FRIEND, removed.id), { id: removed.id, from: SHOP, type: 'reaction', target: received, emoji: '' })
    assertError(await send(world, { to: FRIEND, reactionMessage: 'true', message: '👍', id: '3EB0000000000000DEAD' }), 404, NOT_IN_CHAT)
  })

  test('operation 13: delete sends a deletion for everyone, then the message is gone (404); 401 when message is not false', async world => {
    const sent = assertOk(await send(world, { to: FRIEND, message: 'para apagar' })).id
    await arrived(world, FRIEND, sent)
    assertError(await send(world, { to: FRIEND, message: 'true', deleteID: sent }), 401, 'validation.required')
    const body = assertOk(await send(world, { to: FRIEND, message: 'false', deleteID: sent }))
    assert.equal(body.message, 'Mensagem apagada.')
    assert.deepEqual(await arrived(world, FRIEND, body.id), { id: body.id, from: SHOP, type: 'delete', target: sent })
    assertError(await send(world, { to: FRIEND, message: false, deleteID: sent }), 404, NOT_IN_CHAT)
  })

  test("operation 13: a group member's message, in a group where the device is no admin, is refused 400 and not deleted", async world => {
    const created = await world.post('/_sim/groups', { creator: FRIEND, subject: 'Sem admin', members: [SHOP, OTHER] })
    assert.equal(created.status, 200, created.text)
    const group = created.body.group.id
    const theirs = await phoneSends(world, { from: FRIEND, to: group, type: 'text', text: 'não apague' })
    await hooks(world, [theirs])
    assertError(await send(world, { to: group, message: 'false', deleteID: theirs }), 400, 'Mensagem recusada pela rede.')
    const mine = assertOk(await send(world, { to: group, message: 'depois' })).id
    await arrived(world, OTHER, mine)
    assert.deepEqual(
      (await inbox(world, OTHER)).filter(entry => entry.type === 'delete'),
      [],
      'no deletion reached the members',
    )
  })

  test("operations 12 and 13: the device's own message is found by the contact's LID (the webhook's fromLid) as to, and one sent to the LID by the phone", async world => {
    const lid = (await world.post('/_sim/phones', { phone: WITH_LID, lid: true })).body.lid
    const [hook] = await hooks(world, [await phoneSends(world, { from: WITH_LID, to: SHOP, type: 'text', text: 'meu LID' })])
    assert.deepEqual([hook.chat, hook.fromLid], [WITH_LID, lid])
    const toPhone = assertOk(await send(world, { to: WITH_LID, message: 'ao número' })).id
    const toLid = assertOk(await send(world, { to: lid, message: 'ao LID' })).id
    await arrived(world, WITH_LID, toLid)
    const reaction = assertOk(await send(world, { to: lid, reactionMessage: 'true', message: '👍', id: toPhone }))
    assert.deepEqual(await arrived(world, WITH_LID, reaction.id), { id: reaction.id, from: SHOP, type: 'reaction', target: toPhone, emoji: '👍' })
    const deleted = assertOk(await send(world, { to: `+${WITH_LID}`, message: 'false', deleteID: toLid }))
    assert.deepEqual(await arrived(world, WITH_LID, deleted.id), { id: deleted.id, from: SHOP, type: 'delete', target: toLid })
  })

  test('operation 14: mark as read sends a read receipt to the sender; 404 for a message of another chat', async world => {
    const received = await phoneSends(world, { from: FRIEND, to: SHOP, type: 'text', text: 'leia' })
    await hooks(world, [received])
    const body = assertOk(await send(world, { to: `+${FRIEND}`, markRead: received }))
    assert.deepEqual(body, { status: 200, message: 'Mensagem marcada como lida.' })
    const read = await arrived(world, FRIEND, received)
    assert.deepEqual({ from: read.from, type: read.type, target: read.target }, { from: SHOP, type: 'read', target: received })
    assertError(await send(world, { to: OTHER, markRead: received }), 404, NOT_IN_CHAT)
  })

  test('operations 12 and 14: a message its sender deleted for everyone (the Deletada webhook) is gone: a reaction or read receipt is 404', async world => {
    const gone = await phoneSends(world, { from: FRIEND, to: SHOP, type: 'text', text: 'vou apagar' })
    await hooks(world, [gone])
    await hooks(world, [await phoneSends(world, { from: FRIEND, to: SHOP, type: 'delete', target: gone })])
    assertError(await send(world, { to: FRIEND, reactionMessage: 'true', message: '👍', id: gone }), 404, NOT_IN_CHAT)
    assertError(await send(world, { to: FRIEND, markRead: gone }), 404, NOT_IN_CHAT)
  })

  test("operations 12 to 14: a reaction is no message to react to, delete or mark as read (404), the device's or the phone's", async world => {
    const sent = assertOk(await send(world, { to: FRIEND, message: 'reaja' })).id
    await arrived(world, FRIEND, sent)
    const mine = assertOk(await send(world, { to: FRIEND, reactionMessage: 'true', message: '👍', id: sent })).id
    await arrived(world, FRIEND, mine)
    const theirs = await phoneSends(world, { from: FRIEND, to: SHOP, type: 'reaction', target: sent, emoji: '😂' })
    await hooks(world, [theirs])
    assertError(await send(world, { to: FRIEND, reactionMessage: 'true', message: '❤️', id: mine }), 404, NOT_IN_CHAT)
    assertError(await send(world, { to: FRIEND, message: 'false', deleteID: mine }), 404, NOT_IN_CHAT)
    assertError(await send(world, { to: FRIEND, reactionMessage: 'true', message: '❤️', id: theirs }), 404, NOT_IN_CHAT)
    assertError(await send(world, { to: FRIEND, markRead: theirs }), 404, NOT_IN_CHAT)
  })

  test('acks: each send answers once the network took the message (its own id); the phone gets them in order', async world => {
    const ids: string[] = []
    for (const text of ['um', 'dois', 'três']) ids.push(assertOk(await send(world, { to: FRIEND, message: text })).id)
    assert.equal(new Set(ids).size, 3, 'each send has its own network id')
    for (const id of ids) await arrived(world, FRIEND, id)
    const texts = (await inbox(world, FRIEND)).filter(e => ids.includes(e.id)).map(e => e.text)
    assert.deepEqual(texts, ['um', 'dois', 'três'], 'delivered in order')
  })

  test('acks: an error ack from the server (463) becomes a Falha webhook with the code', async world => {
    const peer = world.peer!
    peer.failMessages(463)
    try {
      const body = assertOk(await send(world, { to: FRIEND, message: 'recusada' }))
      const find = () => world.receiver.hooks.map(h => h.payload).find(p => p?.event === 'Falha' && p.idMessagem === body.id)
      await waitFor(() => !!find(), 15_000, `the Falha webhook of ${body.id}`)
      const failure = find()
      assert.deepEqual(
        { device: failure.device, chat: failure.chat, from: failure.from, fromMe: failure.fromMe, isGroup: failure.isGroup, code: failure.code },
        { device: world.deviceId, chat: FRIEND, from: SHOP, fromMe: true, isGroup: false, code: 463 },
      )
      // The device's LID, as on its other own messages (docs/api.md, Payload: fromLid); before, a Falha carried none.
      assert.equal(failure.fromLid, world.shopLid)
      assert.equal(typeof failure.reason, 'string')
    } finally {
      peer.failMessages(undefined)
    }
  })
}
