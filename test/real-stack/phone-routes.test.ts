import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { waitFor } from '../helpers/gateway.ts'
import { post } from '../helpers/http.ts'
import { hooks, phoneSends } from '../helpers/conformance/world.ts'
import { pick } from '../helpers/conformance/sends.ts'
import { startRealStack, type RealStack } from '../helpers/real-stack.ts'

/**
 * The simulator's phone routes served by the local WhatsApp peer, in front of a gateway on the real
 * Baileys stack (as `GATEWAY_WA_PEER=local npm start` mounts them): the bodies and answers of
 * docs/simulator.md, what reaches the phones decrypted, what the phones send as webhooks.
 */
const routes = suite<World>('the /_sim phone routes on the local WhatsApp peer')

const SHOP = '5511999990001'
const FRIEND = '5511988880002'
const HIDDEN = '5511977770003'

interface World extends RealStack {
  /** POST to the gateway's server (its API and the phone routes). */
  api: RealStack['t']['post']
}

routes.before(async world => {
  Object.assign(world, await startRealStack({ link: false }))
  world.api = world.t.post
})

routes.after(async world => {
  await world.close?.()
})

routes('scan by appkey: 400 without authkey, 404 for another name, 200 for the device showing a QR; then 404 (nothing to scan)', async world => {
  const { api, authkey } = world
  const created = await api('/api/v2/qrcode', { authkey, setAppkey: 'loja', webhook: world.receiver.url })
  assert.is(created.status, 200, created.text)
  assert.equal(await answer(world, '/_sim/scan', { appkey: 'loja', phone: SHOP }), [400, 'authkey is required to find a device by appkey'])
  assert.equal(await answer(world, '/_sim/scan', { authkey, appkey: 'outra', phone: SHOP }), [404, 'device not found'])
  assert.equal(await answer(world, '/_sim/scan', { authkey, appkey: 'loja', phone: SHOP }), [200, 'device linked'])
  // As on the simulated network, the scan answers once the gateway shows the device open (after the 515 and the
  // login): the README's session sends right after it (before, operation 5 read linking and a send 409).
  assert.equal([(await world.status()).conectado, (await world.status()).estado], [true, 'open'], 'open as the scan answers')
  assert.equal(await answer(world, '/_sim/scan', { authkey, appkey: 'loja', phone: SHOP }), [
    404,
    'no pending link matches (QR expired, or code issued for another phone)',
  ])
  assert.equal(await answer(world, '/_sim/scan', { qr: 'not a qr', phone: SHOP }), [400, 'not a WhatsApp QR'])
})

routes('phones with a LID and with a hidden number: their texts reach the webhook from the LID, with the number only when it is not hidden', async world => {
  const lid = await post(`${world.t.url}/_sim/phones`, { phone: FRIEND, lid: '123456789012@lid', pushName: 'Amiga' })
  assert.equal([lid.status, lid.body.lid], [200, '123456789012@lid'], lid.text)
  const hidden = await post(`${world.t.url}/_sim/phones`, { phone: HIDDEN, lid: true, hidePhone: true })
  assert.is(hidden.status, 200, hidden.text)
  assert.match(hidden.body.lid, /^\d+@lid$/)
  const fromFriend = await send(world, { from: FRIEND, to: SHOP, type: 'text', text: 'oi' })
  const fromHidden = await send(world, { from: HIDDEN, to: SHOP, type: 'text', text: 'sem número' })
  const [a, b] = await hooks(world, [fromFriend, fromHidden])
  assert.equal([a.event, a.from, a.fromLid, a.pushName, a.text], ['Texto', FRIEND, '123456789012@lid', 'Amiga', 'oi'])
  assert.equal([b.event, b.fromLid, b.text], ['Texto', hidden.body.lid, 'sem número'])
  assert.not.ok(JSON.stringify(b).includes(HIDDEN), `the hidden number stays hidden: ${JSON.stringify(b)}`)
})

routes(
  "the gateway's text and buttons reach the inbox in the simulator's shape; a tap, a list row, a reaction, a location, a contact and a delete become webhooks",
  async world => {
    const { api, authkey } = world
    const text = await api('/api/create-message', { appkey: 'loja', authkey, to: FRIEND, message: 'Olá!' })
    const buttons = await api('/api/create-message', {
      appkey: 'loja',
      authkey,
      to: FRIEND,
      message: 'Como ajudar?',
      footer_text: 'Loja',
      buttons: [{ type: 'replyButton', displaytext: 'Pedido', id: 'pedido' }],
    })
    assert.equal([text.status, buttons.status], [200, 200], buttons.text)
    const inbox = async () => (await fetch(`${world.t.url}/_sim/inbox/${FRIEND}`)).json() as Promise<any[]>
    await waitFor(async () => (await inbox()).some(m => m.id === buttons.body.id), 10_000, 'the buttons in the inbox')
    const entries = await inbox()
    assert.equal(
      pick(
        entries.find(m => m.id === text.body.id),
        ['from', 'type', 'text'],
      ),
      { from: SHOP, type: 'text', text: 'Olá!' },
    )
    assert.equal(
      pick(
        entries.find(m => m.id === buttons.body.id),
        ['type', 'text', 'footer', 'buttons'],
      ),
      { type: 'buttons', text: 'Como ajudar?', footer: 'Loja', buttons: [{ type: 'reply', id: 'pedido', text: 'Pedido' }] },
    )

    const own = await send(world, { from: FRIEND, to: SHOP, type: 'text', text: 'apagar' })
    const ids = [
      await send(world, { from: FRIEND, to: SHOP, type: 'button', target: buttons.body.id, buttonId: 'pedido', text: 'Pedido' }),
      await send(world, { from: FRIEND, to: SHOP, type: 'button', target: buttons.body.id, buttonId: 'linha-2', text: 'Linha 2', list: true }),
      await send(world, { from: FRIEND, to: SHOP, type: 'reaction', target: text.body.id, emoji: '👍' }),
      await send(world, { from: FRIEND, to: SHOP, type: 'location', latitude: -23.5, longitude: -46.6, name: 'Loja' }),
      await send(world, { from: FRIEND, to: SHOP, type: 'contact', name: 'Maria', phone: '5511966660004' }),
      await send(world, { from: FRIEND, to: SHOP, type: 'delete', target: own }),
    ]
    const [tap, row, reaction, location, contact, deleted] = await hooks(world, ids)
    assert.equal([tap.event, tap.buttonId, tap.target], ['Botão', 'pedido', buttons.body.id])
    assert.equal([row.event, row.buttonId], ['Lista', 'linha-2'])
    assert.equal([reaction.event, reaction.emoji, reaction.target], ['Reação', '👍', text.body.id])
    assert.equal([location.event, location.latitude, location.longitude], ['Localização', -23.5, -46.6])
    assert.equal([contact.event, contact.name, contact.phone], ['Contato', 'Maria', '5511966660004'])
    assert.equal([deleted.event, deleted.target], ['Deletada', own])
  },
)

routes(
  "what the peer cannot do answers as the simulator does for bad input: a wrong target 404, another's message 400, phone media without the media host 400, a group description 400",
  async world => {
    const gatewaySent = ((await (await fetch(`${world.t.url}/_sim/inbox/${FRIEND}`)).json()) as any[])[0].id
    assert.equal(await answer(world, '/_sim/send', { from: FRIEND, to: SHOP, type: 'delete', target: 'NOPE' }), [404, 'no message NOPE in that chat'])
    assert.equal(await answer(world, '/_sim/send', { from: FRIEND, to: SHOP, type: 'delete', target: gatewaySent }), [
      400,
      'only the sender can delete a message',
    ])
    assert.equal(await answer(world, '/_sim/send', { from: FRIEND, to: SHOP, type: 'text', text: 'x', extra: 1, nope: undefined }), [200, 'message sent'])
    assert.equal(await answer(world, '/_sim/send', { from: FRIEND, to: '5511000000000', type: 'text', text: 'x' }), [
      404,
      '5511000000000 is not a phone of this network',
    ])
    assert.equal(await answer(world, '/_sim/send', { from: FRIEND, to: SHOP, type: 'image', base64: 'aGk=' }), [
      400,
      "the local WhatsApp peer's phones send image only with its media host (media: true)",
    ])
    const sticker = await answer(world, '/_sim/send', { from: FRIEND, to: SHOP, type: 'sticker' })
    assert.is(sticker[0], 400)
    assert.match(sticker[1], /^type: .*Expected one of .*"sticker"/)
    assert.equal(await answer(world, '/_sim/groups', { creator: FRIEND, subject: 'Grupo', description: 'x' }), [
      400,
      "the local WhatsApp peer's groups have no description yet",
    ])
  },
)

routes('stats count connections and replaced; unlink by appkey logs the device out (401), a second unlink is 404', async world => {
  const stats = (await (await fetch(`${world.t.url}/_sim/stats`)).json()) as any
  assert.equal([stats.connections, stats.replaced, stats.waiting, stats.peer.pairings], [1, 0, 0, 1], JSON.stringify(stats))
  assert.ok(stats.sent >= 2 && stats.received >= 9, JSON.stringify(stats))
  assert.equal(await answer(world, '/_sim/unlink', { authkey: world.authkey, appkey: 'loja' }), [200, 'device unlinked'])
  await waitFor(async () => (await world.status()).estado === 'logged-out', 10_000, 'logged-out')
  assert.equal(await answer(world, '/_sim/unlink', { authkey: world.authkey, appkey: 'loja' }), [404, 'device not linked'])
  assert.equal(world.peer.records.problems, [])
})

routes.run()

// --- Internal helpers ---

async function answer(world: World, path: string, body: Record<string, unknown>): Promise<[number, string]> {
  const got = await post(world.t.url + path, body)
  return [got.status, got.body?.message]
}

async function send(world: World, body: Record<string, unknown>): Promise<string> {
  return phoneSends({ post: world.api }, body)
}
