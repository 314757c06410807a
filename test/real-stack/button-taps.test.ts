import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { waitFor } from '../helpers/gateway.ts'
import { SHOP, startImageStack, type ImageStack } from '../helpers/real-stack.ts'

/**
 * Taps on the gateway's native-flow buttons (operation 15) and carousel quick replies (operation 16)
 * on the real Baileys stack: the peer's phone answers as a WhatsApp phone does (an
 * interactiveResponseMessage with a quick_reply nativeFlowResponseMessage, quoting the tapped
 * message), and the gateway reports the Botão webhook with the tapped button's id and the target.
 */
const taps = suite<World>('button taps on the real Baileys stack against the local WhatsApp peer')

const FRIEND = '5511988880002'

type World = ImageStack

taps.before(async world => {
  Object.assign(world, await startImageStack({ peer: { media: true } }))
})

taps.after(async world => {
  await world.close?.()
})

/** Send `body` through /api/create-message to FRIEND; the id once the phone decrypted it. */
async function delivered(world: World, body: Record<string, unknown>): Promise<string> {
  const { t, peer, authkey, device } = world
  const sent = await t.post('/api/create-message', { appkey: device.appkey, authkey, to: FRIEND, ...body })
  assert.is(sent.status, 200, sent.text)
  await waitFor(() => peer.phone(FRIEND).inbox.some(m => m.id === sent.body.id), 15_000, `the phone to decrypt ${sent.body.id}`)
  return sent.body.id
}

taps('a tap on a reply button of operation 15: an interactiveResponseMessage as a phone sends it, and a Botão webhook', async world => {
  const friend = world.peer.phone(FRIEND)
  const target = await delivered(world, {
    message: 'Como ajudar?',
    buttons: [
      { type: 'urlButton', displaytext: 'Ver cardápio', action: 'https://example.com/cardapio' },
      { type: 'replyButton', displaytext: 'Fazer pedido', id: 'pedido' },
    ],
  })
  const tap = friend.tapButton(SHOP, target, 'pedido')
  const reply = tap.message.interactiveResponseMessage
  assert.ok(reply, `an interactiveResponseMessage (got ${Object.keys(tap.message).join(', ')})`)
  assert.equal([reply!.nativeFlowResponseMessage?.name, JSON.parse(reply!.nativeFlowResponseMessage?.paramsJson ?? '{}').id], ['quick_reply', 'pedido'])
  assert.equal([reply!.body?.text, reply!.contextInfo?.stanzaId], ['Fazer pedido', target])
  assert.ok(reply!.contextInfo?.quotedMessage?.interactiveMessage, 'the reply quotes the tapped message')
  const hook = await world.hookFor(tap.id)
  assert.equal([hook.event, hook.buttonId, hook.text, hook.target, hook.from], ['Botão', 'pedido', 'Fazer pedido', target, FRIEND])
  assert.equal([hook.device, hook.chat, hook.to, hook.fromMe, hook.isGroup, hook.list], [world.device.id, FRIEND, SHOP, false, false, undefined])
  assert.ok(hook.timestamp > 1e12, `timestamp ${hook.timestamp} is in milliseconds`)
})

taps('a tap on a quick reply of a carousel card (operation 16): a Botão webhook with that button id and the carousel as target', async world => {
  const friend = world.peer.phone(FRIEND)
  const target = await delivered(world, {
    message: 'Nossas pizzas',
    cards: [
      { image_url: `${world.images.url}/a.png`, title: 'Margherita', buttons: [{ type: 'quickReplyButton', displaytext: 'Quero', id: 'margherita' }] },
      {
        image_url: `${world.images.url}/b.png`,
        title: 'Calabresa',
        buttons: [
          { type: 'urlButton', displaytext: 'Detalhes', action: 'https://example.com/calabresa' },
          { type: 'quickReplyButton', displaytext: 'Eu quero', id: 'calabresa' },
        ],
      },
    ],
  })
  const tap = friend.tapButton(SHOP, target, 'calabresa')
  assert.is(tap.message.interactiveResponseMessage?.nativeFlowResponseMessage?.name, 'quick_reply')
  const hook = await world.hookFor(tap.id)
  assert.equal([hook.event, hook.buttonId, hook.text, hook.target, hook.from], ['Botão', 'calabresa', 'Eu quero', target, FRIEND])
})

taps('a tap on buttons the gateway sent to a group goes to the group (the phone route sends it so too): Botão webhooks from the group', async world => {
  const { t, peer, authkey, device } = world
  const friend = peer.phone(FRIEND)
  const group = friend.createGroup('Clientes', SHOP)
  const sent = await t.post('/api/create-message', {
    appkey: device.appkey,
    authkey,
    to: group,
    message: 'Quem vem?',
    buttons: [{ type: 'replyButton', displaytext: 'Eu', id: 'eu' }],
  })
  assert.is(sent.status, 200, sent.text)
  await waitFor(
    () => friend.inbox.some(m => m.id === sent.body.id),
    15_000,
    `the member to decrypt the group buttons (problems: ${peer.records.problems.join('; ')})`,
  )
  const tap = friend.tapButton(SHOP, sent.body.id, 'eu')
  assert.is(tap.to, group, 'the tap goes to the group, where the buttons are')
  const hook = await world.hookFor(tap.id)
  assert.equal(
    [hook.event, hook.buttonId, hook.text, hook.target, hook.isGroup, hook.group, hook.from],
    ['Botão', 'eu', 'Eu', sent.body.id, true, group, FRIEND],
  )
  const routed = await t.post('/_sim/send', { from: FRIEND, to: group, type: 'button', target: sent.body.id, buttonId: 'eu', text: 'Eu' })
  assert.is(routed.status, 200, routed.text)
  const again = await world.hookFor(routed.body.id)
  assert.equal([again.event, again.buttonId, again.target, again.group], ['Botão', 'eu', sent.body.id, group])

  // The 1:1 chat does not show the group's message: the phone route answers 404 as the simulator does, and sends nothing.
  const before = friend.sent.length
  for (const body of [
    { type: 'button', buttonId: 'eu', text: 'Eu' },
    { type: 'button', buttonId: 'eu', text: 'Eu', list: true },
    { type: 'reaction', emoji: '👍' },
    { type: 'delete' },
  ]) {
    const wrongChat = await t.post('/_sim/send', { from: FRIEND, to: SHOP, target: sent.body.id, ...body })
    assert.equal([wrongChat.status, wrongChat.body?.message], [404, `no message ${sent.body.id} in that chat`], `${JSON.stringify(body)}: ${wrongChat.text}`)
  }
  assert.is(friend.sent.length, before, 'nothing was sent')
  assert.equal(peer.records.problems, [])
})

taps(
  'a phone taps only what the message shows: not a URL button, not a button it does not have (the phone route answers 400), not a message without buttons',
  async world => {
    const friend = world.peer.phone(FRIEND)
    const target = await delivered(world, {
      message: 'Escolha',
      buttons: [
        { type: 'replyButton', displaytext: 'Sim', id: 'sim' },
        { type: 'urlButton', displaytext: 'Site', action: 'https://example.com/' },
      ],
    })
    const text = await delivered(world, { message: 'Só texto' })
    const sent = friend.sent.length
    assert.throws(() => friend.tapButton(SHOP, target, 'Site'), /no quick reply button Site/)
    assert.throws(() => friend.tapButton(SHOP, target, 'nao'), /no quick reply button nao/)
    assert.throws(() => friend.tapButton(SHOP, text, 'sim'), /no buttons/)
    assert.throws(() => friend.tapButton(SHOP, 'NOPE', 'sim'), /no message NOPE/)
    const route = await world.t.post('/_sim/send', { from: FRIEND, to: SHOP, type: 'button', target, buttonId: 'nao', text: 'Não' })
    assert.equal([route.status, route.body?.message], [400, `message ${target} has no quick reply button nao`], route.text)
    assert.is(friend.sent.length, sent, 'nothing was sent')
    assert.equal(world.peer.records.problems, [])
  },
)

taps.run()
