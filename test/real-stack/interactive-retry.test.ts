import type { BinaryNode, proto } from '@whiskeysockets/baileys'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { waitFor } from '../helpers/gateway.ts'
import { startImageStack, type ImageStack } from '../helpers/real-stack.ts'

/**
 * A contact's phone that could not decrypt one of the gateway's interactive messages asks for it
 * again (a retry receipt); Baileys answers by sending it again under the same id. WhatsApp renders
 * buttons and carousels only from a message stanza carrying the `<biz>` node (interactive.ts): the
 * copy sent again must carry it too, or the contact's retried copy shows no buttons.
 */
const retries = suite<World>('interactive messages sent again on a retry receipt, on the real Baileys stack')

const FRIEND = '5511988880002'

type World = ImageStack

retries.before(async world => {
  Object.assign(world, await startImageStack({ peer: { media: true } }))
})

retries.after(async world => {
  await world.close?.()
})

/** Send `body` through /api/create-message to FRIEND, let the phone ask for it again; the stanzas the device sent under its id, in order, and what the phone decrypted of the copy sent again. */
async function sentAgain(world: World, body: Record<string, unknown>): Promise<{ stanzas: BinaryNode[]; again: proto.IMessage }> {
  const { t, peer, authkey, device } = world
  const friend = peer.phone(FRIEND)
  const sent = await t.post('/api/create-message', { appkey: device.appkey, authkey, to: FRIEND, ...body })
  assert.is(sent.status, 200, sent.text)
  const copies = () => friend.inbox.filter(m => m.id === sent.body.id)
  await waitFor(() => copies().length === 1, 15_000, `the phone to decrypt ${sent.body.id}`)
  friend.askResend(sent.body.id)
  await waitFor(() => copies().length === 2, 15_000, `the phone to decrypt ${sent.body.id} sent again`)
  assert.equal(peer.records.problems, [])
  return { stanzas: peer.records.nodes.filter(n => n.tag === 'message' && n.attrs.id === sent.body.id), again: copies()[1].message }
}

function bizNodes(stanza: BinaryNode): BinaryNode[] {
  return Array.isArray(stanza.content) ? stanza.content.filter(c => c.tag === 'biz') : []
}

retries('buttons (operation 15) sent again on a retry receipt carry the <biz> node, as the first send did', async world => {
  const { stanzas, again } = await sentAgain(world, {
    message: 'Como ajudar?',
    buttons: [{ type: 'replyButton', displaytext: 'Fazer pedido', id: 'pedido' }],
  })
  assert.is(again.interactiveMessage?.nativeFlowMessage?.buttons?.[0]?.name, 'quick_reply', `the buttons sent again (got ${Object.keys(again)})`)
  assert.is(stanzas.length, 2, 'the first send and the one sent again')
  assert.is(bizNodes(stanzas[0]).length, 1, 'the first send carries <biz>')
  assert.is(bizNodes(stanzas[1]).length, 1, 'the copy sent again carries <biz>: without it WhatsApp renders no buttons')
})

retries('a carousel (operation 16) sent again on a retry receipt carries the <biz> node', async world => {
  const { stanzas, again } = await sentAgain(world, {
    message: 'Nossas pizzas',
    cards: [{ image_url: `${world.images.url}/a.png`, title: 'Margherita', buttons: [{ type: 'quickReplyButton', displaytext: 'Quero', id: 'margherita' }] }],
  })
  assert.is(again.interactiveMessage?.carouselMessage?.cards?.length, 1, `the carousel sent again (got ${Object.keys(again)})`)
  assert.is(stanzas.length, 2)
  assert.is(bizNodes(stanzas[1]).length, 1, 'the copy sent again carries <biz>')
})

retries('buttons asked for again by two retry receipts at once: every copy sent again carries the <biz> node', async world => {
  const { t, peer, authkey, device } = world
  const friend = peer.phone(FRIEND)
  const sent = await t.post('/api/create-message', {
    appkey: device.appkey,
    authkey,
    to: FRIEND,
    message: 'Como ajudar?',
    buttons: [{ type: 'replyButton', displaytext: 'Fazer pedido', id: 'pedido' }],
  })
  assert.is(sent.status, 200, sent.text)
  const stanzas = () => peer.records.nodes.filter(n => n.tag === 'message' && n.attrs.id === sent.body.id)
  await waitFor(() => friend.inbox.some(m => m.id === sent.body.id), 15_000, `the phone to decrypt ${sent.body.id}`)
  friend.askResend(sent.body.id, 1)
  friend.askResend(sent.body.id, 2)
  await waitFor(() => stanzas().length >= 3, 15_000, `two copies of ${sent.body.id} sent again`)
  await new Promise(resolve => setTimeout(resolve, 500)) // a late third copy would show here
  assert.equal(peer.records.problems, [])
  assert.equal(
    stanzas().map(s => bizNodes(s).length),
    [1, 1, 1],
    'the first send and each copy sent again carry <biz>: one without it renders no buttons',
  )
})

/** Send `body` through /api/create-message to FRIEND and wait until the phone decrypted it; its id. */
async function delivered(world: World, body: Record<string, unknown>): Promise<string> {
  const { t, peer, authkey, device } = world
  const sent = await t.post('/api/create-message', { appkey: device.appkey, authkey, to: FRIEND, ...body })
  assert.is(sent.status, 200, sent.text)
  await waitFor(() => peer.phone(FRIEND).inbox.some(m => m.id === sent.body.id), 15_000, `the phone to decrypt ${sent.body.id}`)
  return sent.body.id
}

/** The stanzas the device sent under message `id`, in order. */
function stanzasOf(world: World, id: string): BinaryNode[] {
  return world.peer.records.nodes.filter(n => n.tag === 'message' && n.attrs.id === id)
}

/** The phone asks for message `id` again `times` times (counts 1, 2, ...); waits until the device acked each of those receipts (its answers to them, Baileys' and the adapter's, are queued by then). */
async function askRepeatedly(world: World, id: string, times: number): Promise<void> {
  const acks = () =>
    world.peer.records.nodes.filter(n => n.tag === 'ack' && n.attrs.class === 'receipt' && n.attrs.type === 'retry' && n.attrs.id === id).length
  const before = acks()
  for (let count = 1; count <= times; count++) world.peer.phone(FRIEND).askResend(id, count)
  await waitFor(() => acks() === before + times, 15_000, `the device to ack ${times} retry receipts for ${id}`)
}

const BUTTONS = { message: 'Como ajudar?', buttons: [{ type: 'replyButton', displaytext: 'Fazer pedido', id: 'pedido' }] }

retries('buttons asked for again by many retry receipts are sent again no more often than Baileys sends a text again', async world => {
  const buttons = await delivered(world, BUTTONS)
  const text = await delivered(world, { message: 'Olá' })
  await askRepeatedly(world, buttons, 5)
  // The adapter's resends of the buttons are queued on Baileys' receipt queue before these receipts are handled.
  await askRepeatedly(world, text, 5)
  const textAgain = stanzasOf(world, text).length - 1
  const buttonsAgain = stanzasOf(world, buttons).length - 1
  assert.ok(textAgain > 0 && textAgain < 5, `Baileys sends a text again under its limit (${textAgain} of 5)`)
  assert.ok(buttonsAgain > 0, 'the buttons are sent again')
  assert.ok(buttonsAgain <= textAgain, `buttons sent again ${buttonsAgain} times for 5 retry receipts, a text ${textAgain} times`)
  assert.equal(
    stanzasOf(world, buttons).map(s => bizNodes(s).length),
    Array(buttonsAgain + 1).fill(1),
  )
  assert.equal(world.peer.records.problems, [])
})

retries('one retry receipt naming several interactive messages: each is sent again with the <biz> node', async world => {
  const first = await delivered(world, BUTTONS)
  const second = await delivered(world, { ...BUTTONS, message: 'Mais alguma coisa?' })
  world.peer.phone(FRIEND).askResend([first, second])
  await waitFor(() => stanzasOf(world, first).length === 2 && stanzasOf(world, second).length === 2, 15_000, `${first} and ${second} sent again`)
  assert.equal(world.peer.records.problems, [])
  assert.equal(
    [first, second].map(id => stanzasOf(world, id).map(s => bizNodes(s).length)),
    [
      [1, 1],
      [1, 1],
    ],
    'every copy sent again carries <biz>: one without it renders no buttons',
  )
  const copies = (id: string) => world.peer.phone(FRIEND).inbox.filter(m => m.id === id)
  await waitFor(() => copies(first).length === 2 && copies(second).length === 2, 15_000, 'the phone to decrypt both copies')
  assert.is(copies(second)[1].message.interactiveMessage?.nativeFlowMessage?.buttons?.[0]?.name, 'quick_reply')
})

retries('a text sent again on a retry receipt carries no <biz> node (only interactive messages are sent with one)', async world => {
  const { stanzas, again } = await sentAgain(world, { message: 'Olá' })
  assert.is(again.extendedTextMessage?.text ?? again.conversation, 'Olá')
  assert.is(stanzas.length, 2)
  assert.equal([bizNodes(stanzas[0]).length, bizNodes(stanzas[1]).length], [0, 0])
})

retries.run()
