import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import type { WaPeer } from '../../adapters/wa-peer/index.ts'
import { qrText } from '../helpers/cluster.ts'
import { waitFor } from '../helpers/gateway.ts'
import { hookFor, realStackGateway, register, trustedPeer, type RealStackGateway, type TrustedPeer } from '../helpers/real-stack.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

/**
 * The whole gateway on the real Baileys stack against the local WhatsApp peer: link by QR through
 * the HTTP API, send and receive really encrypted messages, restart on the same SQLite store, unlink.
 * One world for the suite (a link costs a few hundred ms, and the CI budget is tight).
 */
const real = suite<World>('the gateway on the real Baileys stack against the local WhatsApp peer')

const SHOP = '5511999990001'
const FRIEND = '5511988880002'

interface World {
  trusted: TrustedPeer
  peer: WaPeer
  receiver: Receiver
  storeUrl: string
  dir: string
  t: RealStackGateway
  authkey: string
  device: { id: string; appkey: string }
  /** Every session state the gateways reported, in order. */
  states: string[]
}

real.before(async world => {
  world.trusted = await trustedPeer()
  world.peer = world.trusted.peer
  world.receiver = await startReceiver()
  world.dir = mkdtempSync(join(tmpdir(), 'zapgate-real-'))
  world.storeUrl = `sqlite://${join(world.dir, 'store.sqlite')}`
  world.states = []
  world.t = await gateway(world)
  world.authkey = await register(world.t)
})

real.after(async world => {
  await world.t?.stop()
  await world.receiver?.stop()
  await world.trusted?.close()
  rmSync(world.dir, { recursive: true, force: true })
})

real('operation 3 answers a QR that the phone scans: the device pairs (account signature, HMAC, device signature), logs in and is connected', async world => {
  const { t, peer, authkey } = world
  const created = await t.post('/api/v2/qrcode', { authkey, setAppkey: 'loja', webhook: world.receiver.url })
  assert.is(created.status, 200, created.text)
  world.device = { id: created.body.id, appkey: created.body.appkey }
  const linked = await peer.phone(SHOP).scan(qrText(created.body.qrcode))
  assert.match(linked.jid, new RegExp(`^${SHOP}:1@s\\.whatsapp\\.net$`))
  await waitFor(async () => (await status(world)).conectado === true, 10_000, 'connected')
  assert.is((await status(world)).telefone, SHOP)
  assert.equal([peer.stats.pairings, peer.stats.logins, peer.stats.replaced], [1, 1, 0])
  assert.ok(peer.phone(SHOP).devices()[0].preKeys > 0, 'the device uploaded its pre-keys')
  assert.equal(peer.records.problems, [])
})

real(
  'send text: the phone of the recipient decrypts exactly that text (pkmsg from a usync LID and a key bundle); its delivery and read receipts reach the device',
  async world => {
    const { t, peer, authkey, device } = world
    const friend = peer.phone(FRIEND, { pushName: 'Amiga' })
    const sent = await t.post('/api/create-message', { appkey: device.appkey, authkey, to: FRIEND, message: 'Olá, tudo bem?' })
    assert.is(sent.status, 200, sent.text)
    await waitFor(() => friend.inbox.some(m => m.id === sent.body.id), 10_000, 'the friend to decrypt the message')
    const got = friend.inbox.find(m => m.id === sent.body.id)!
    assert.is(got.message.extendedTextMessage?.text ?? got.message.conversation, 'Olá, tudo bem?')
    assert.is(got.from, SHOP)
    assert.is(got.encryption, 'pkmsg')
    const own = peer.phone(SHOP).inbox.find(m => m.id === sent.body.id)
    assert.ok(own?.sentByOwnDevice, 'the shop phone got its own copy (device sent message)')
    assert.equal(peer.records.problems, [])
  },
)

real('the phone sends text: the device webhook gets Texto with the sender, its LID and name; the device answers with a delivery receipt', async world => {
  const { peer, receiver, device } = world
  const friend = peer.phone(FRIEND)
  const sent = friend.sendText(SHOP, 'Quero um orçamento')
  const hook = await hookFor(receiver, sent.id)
  assert.equal(
    {
      event: hook.event,
      device: hook.device,
      chat: hook.chat,
      from: hook.from,
      fromLid: hook.fromLid,
      pushName: hook.pushName,
      to: hook.to,
      fromMe: hook.fromMe,
      isGroup: hook.isGroup,
      text: hook.text,
    },
    {
      event: 'Texto',
      device: device.id,
      chat: FRIEND,
      from: FRIEND,
      fromLid: friend.lid,
      pushName: 'Amiga',
      to: SHOP,
      fromMe: false,
      isGroup: false,
      text: 'Quero um orçamento',
    },
  )
  await waitFor(() => friend.receipts.some(r => r.id === sent.id), 5_000, 'a delivery receipt')
  assert.ok(['delivery', 'inactive'].includes(friend.receipts.find(r => r.id === sent.id)!.type))
})

real('operation 14 (markRead) sends a read receipt that the phone receives', async world => {
  const { t, peer, authkey, device } = world
  const friend = peer.phone(FRIEND)
  const last = friend.sent.at(-1)!
  const read = await t.post('/api/create-message', { appkey: device.appkey, authkey, to: FRIEND, markRead: last.id })
  assert.is(read.status, 200, read.text)
  await waitFor(() => friend.receipts.some(r => r.id === last.id && r.type === 'read'), 5_000, 'a read receipt')
})

real('location, contact, reaction and delete from the gateway reach the phone decrypted as the WhatsApp messages they stand for', async world => {
  const { t, peer, authkey, device } = world
  const friend = peer.phone(FRIEND)
  const call = async (body: Record<string, unknown>) => {
    const answer = await t.post('/api/create-message', { appkey: device.appkey, authkey, to: FRIEND, ...body })
    assert.is(answer.status, 200, answer.text)
    await waitFor(() => friend.inbox.some(m => m.id === answer.body.id), 10_000, `the friend to decrypt ${JSON.stringify(body)}`)
    return friend.inbox.find(m => m.id === answer.body.id)!.message
  }
  const location = await call({ latitude: '-23.5505', longitude: '-46.6333', message: 'Loja' })
  assert.equal([location.locationMessage?.degreesLatitude, location.locationMessage?.degreesLongitude], [-23.5505, -46.6333])
  const contact = await call({ contact: 'Maria', message: '5511977770003' })
  assert.is(contact.contactMessage?.displayName, 'Maria')
  assert.match(contact.contactMessage?.vcard ?? '', /waid=5511977770003/)
  const target = friend.sent.at(-1)!.id
  const reaction = await call({ reactionMessage: 'true', message: '👍', id: target })
  assert.equal([reaction.reactionMessage?.key?.id, reaction.reactionMessage?.text], [target, '👍'])
  const first = friend.inbox.find(m => !m.message.locationMessage && !m.message.contactMessage && !m.message.reactionMessage)!.id
  const revoke = await call({ deleteID: first, message: 'false' })
  assert.equal([revoke.protocolMessage?.type, revoke.protocolMessage?.key?.id], [0, first])
  assert.equal(peer.records.problems, [])
})

real('reaction, location, contact, delete and a button tap from the phone become Reação, Localização, Contato, Deletada and Botão webhooks', async world => {
  const { t, peer, receiver, authkey, device } = world
  const friend = peer.phone(FRIEND)
  const buttons = await t.post('/api/create-message', {
    appkey: device.appkey,
    authkey,
    to: FRIEND,
    message: 'Confirma?',
    buttons: [{ type: 'replyButton', displaytext: 'Sim', id: 'sim' }],
  })
  assert.is(buttons.status, 200, buttons.text)
  await waitFor(() => friend.inbox.some(m => m.id === buttons.body.id), 10_000, 'the friend to decrypt the buttons')
  const before = receiver.hooks.length
  const target = friend.inbox[0].id
  const reaction = friend.react(SHOP, target, '❤️')
  const location = friend.sendLocation(SHOP, -22.9068, -43.1729, 'Rio')
  const contact = friend.sendContact(SHOP, 'João', '5511966660004')
  const revoke = friend.revoke(SHOP, friend.sent.find(m => m.message.conversation === 'Quero um orçamento')!.id)
  const tap = friend.tapButton(SHOP, buttons.body.id, 'sim')
  for (const { id } of [reaction, location, contact, revoke, tap]) await hookFor(receiver, id)
  const byId = new Map(receiver.hooks.slice(before).map(h => [h.payload.idMessagem, h.payload]))
  assert.equal([byId.get(reaction.id)?.event, byId.get(reaction.id)?.emoji, byId.get(reaction.id)?.target], ['Reação', '❤️', target])
  assert.equal(
    [byId.get(location.id)?.event, byId.get(location.id)?.latitude, byId.get(location.id)?.longitude, byId.get(location.id)?.name],
    ['Localização', -22.9068, -43.1729, 'Rio'],
  )
  assert.equal([byId.get(contact.id)?.event, byId.get(contact.id)?.name, byId.get(contact.id)?.phone], ['Contato', 'João', '5511966660004'])
  assert.is(byId.get(revoke.id)?.event, 'Deletada', JSON.stringify([...byId.values()]))
  assert.equal(
    [byId.get(tap.id)?.event, byId.get(tap.id)?.buttonId, byId.get(tap.id)?.text, byId.get(tap.id)?.target],
    ['Botão', 'sim', 'Sim', buttons.body.id],
  )
})

real('a phone that addresses its messages from its LID: the webhook names its number (from sender_pn), and a reply to the chat reaches it', async world => {
  const { t, peer, receiver, authkey, device } = world
  const hidden = peer.phone('5511955550005', { addressing: 'lid', pushName: 'Lia' })
  const sent = hidden.sendText(SHOP, 'Oi pelo LID')
  const hook = await hookFor(receiver, sent.id)
  assert.equal([hook?.chat, hook?.from, hook?.fromLid, hook?.text], ['5511955550005', '5511955550005', hidden.lid, 'Oi pelo LID'])
  const reply = await t.post('/api/create-message', { appkey: device.appkey, authkey, to: hook.chat, message: 'Resposta' })
  assert.is(reply.status, 200, reply.text)
  await waitFor(() => hidden.inbox.some(m => m.id === reply.body.id), 10_000, 'the reply to be decrypted')
})

real('a message WhatsApp refuses (error ack 463) becomes a Falha webhook with its code', async world => {
  const { t, peer, receiver, authkey, device } = world
  peer.failMessages(463)
  try {
    const sent = await t.post('/api/create-message', { appkey: device.appkey, authkey, to: FRIEND, message: 'Recusada' })
    assert.is(sent.status, 200, sent.text)
    const failure = () => receiver.hooks.map(h => h.payload).find(p => p.idMessagem === sent.body.id && p.event === 'Falha')
    await waitFor(() => !!failure(), 10_000, 'a Falha webhook')
    assert.equal([failure().code, failure().fromMe, failure().chat], [463, true, FRIEND])
    assert.not.ok(peer.phone(FRIEND).inbox.some(m => m.id === sent.body.id))
  } finally {
    peer.failMessages(undefined)
  }
})

real(
  'a number that is not on WhatsApp answers 404 (usync contact "out"); a Brazilian mobile registered without the ninth digit is found in its other form',
  async world => {
    const { t, peer, authkey, device } = world
    const nobody = await t.post('/api/create-message', { appkey: device.appkey, authkey, to: '5511911112222', message: 'Alô?' })
    assert.equal([nobody.status, nobody.body.message], [404, 'Destino não encontrado na rede.'])
    const old = peer.phone('551188887777')
    const sent = await t.post('/api/create-message', { appkey: device.appkey, authkey, to: '5511988887777', message: 'Com o nove' })
    assert.is(sent.status, 200, sent.text)
    await waitFor(() => old.inbox.some(m => m.id === sent.body.id), 10_000, 'the old-format number to decrypt it')
  },
)

real('two devices of the gateway linked to two phones message each other: the send reaches the other phone and its linked device', async world => {
  const { t, peer, receiver, authkey, device } = world
  const created = await t.post('/api/v2/qrcode', { authkey, setAppkey: 'recepcao', webhook: receiver.url })
  assert.is(created.status, 200, created.text)
  await peer.phone(FRIEND).scan(qrText(created.body.qrcode))
  await waitFor(
    async () => (await t.post('/api/developer', { authkey, message: 'recepcao', checkDispositivo: 'true' })).body?.dispositivo?.conectado === true,
    10_000,
    'recepcao connected',
  )
  const sent = await t.post('/api/create-message', { appkey: device.appkey, authkey, to: FRIEND, message: 'Para os dois aparelhos' })
  assert.is(sent.status, 200, sent.text)
  const received = () => receiver.hooks.map(h => h.payload).find(p => p.idMessagem === sent.body.id && p.device === created.body.id)
  await waitFor(() => !!received(), 10_000, 'the webhook of the other device')
  assert.equal([received().event, received().from, received().chat, received().text, received().fromMe], ['Texto', SHOP, SHOP, 'Para os dois aparelhos', false])
  assert.ok(
    peer.phone(FRIEND).inbox.some(m => m.id === sent.body.id),
    'the phone got it too',
  )
  assert.equal(peer.records.problems, [])
})

real('a restart of the gateway on the same store logs the device in without a scan and delivers what the phone sent while it was down', async world => {
  const { peer, receiver } = world
  const { pairings, logins } = peer.stats
  await world.t.stop()
  const sent = peer.phone(FRIEND).sendText(SHOP, 'Mensagem enquanto desligado')
  world.t = await gateway(world)
  const hook = await hookFor(receiver, sent.id, 20_000)
  assert.is(hook.event, 'Texto')
  await waitFor(() => peer.stats.logins === logins + 2, 10_000, 'both linked devices to log in again')
  assert.is(peer.stats.pairings, pairings, 'no new pairing')
  assert.is(peer.stats.replaced, 0)
})

real('the phone unlinks the device (401): its status says logged-out, and a new QR links it again', async world => {
  const { t, peer, authkey } = world
  await waitFor(async () => (await status(world)).conectado === true, 10_000, 'connected after the restart')
  const { pairings } = peer.stats
  peer.phone(SHOP).unlink()
  await waitFor(() => world.states.at(-1) === 'logged-out', 10_000, `logged-out (states: ${world.states.join(', ')})`)
  assert.is((await status(world)).estado, 'logged-out')
  const again = await t.post('/api/developer', { authkey, message: 'loja', conecteQR: 'true' })
  assert.is(again.status, 200, again.text)
  await peer.phone(SHOP).scan(qrText(again.body.qrcode))
  await waitFor(async () => (await status(world)).conectado === true, 10_000, 'connected again')
  assert.is(peer.stats.pairings, pairings + 1)
})

real.run()

// --- Internal helpers ---

async function gateway(world: World): Promise<RealStackGateway> {
  const t = await realStackGateway(world.peer, { storage: await storageFromUrl(world.storeUrl) })
  t.gateway.events.on('device-status', ({ status }) => void world.states.push(status.state))
  return t
}

async function status(world: World): Promise<Record<string, any>> {
  const answer = await world.t.post('/api/developer', { authkey: world.authkey, message: 'loja', checkDispositivo: 'true' })
  return answer.body?.dispositivo ?? {}
}
