import { randomBytes } from 'node:crypto'
import { Agent } from 'node:https'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { baileysTransport } from '../../adapters/transport-baileys/index.ts'
import { startWaPeer, type WaPeer } from '../../adapters/wa-peer/index.ts'
import { qrText } from '../helpers/cluster.ts'
import { startGateway, waitFor, type TestGateway } from '../helpers/gateway.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'
import { PNG } from '../helpers/samples.ts'

/**
 * Media on the real Baileys stack against the local WhatsApp peer, through the whole gateway: the
 * peer's `media_conn` names its HTTPS media host (a self-signed certificate, trusted through the
 * transport's `socketConfig.fetchAgent`); an image the gateway sends is encrypted and uploaded by
 * Baileys, and the phone downloads and decrypts exactly those bytes; an image a phone sends (encrypted
 * and uploaded by the peer) is downloaded and decrypted by the gateway and carried by the webhook.
 */
const media = suite<World>('media on the real Baileys stack against the local WhatsApp peer')

const SHOP = '5511999990001'
const FRIEND = '5511988880002'
/** A PNG with random bytes after its end: an image to the gateway's sniffing, and only the exact file compares equal. */
const IMAGE = Buffer.concat([PNG, randomBytes(4000)])

interface World {
  peer: WaPeer
  restoreRoot: () => void
  receiver: Receiver
  t: TestGateway
  authkey: string
  device: { id: string; appkey: string }
}

media.before(async world => {
  world.peer = await startWaPeer({ media: true })
  world.restoreRoot = world.peer.trustRoot()
  world.receiver = await startReceiver()
  const transport = baileysTransport({
    resolveVersion: async () => [2, 3000, 1],
    // Loopback only: the real makeWASocket connects to the peer, never to WhatsApp; media goes to its host.
    socketConfig: { waWebSocketUrl: world.peer.url, connectTimeoutMs: 5_000, fetchAgent: new Agent({ ca: world.peer.media!.ca }) },
    reconnect: { initialDelayMs: 50, jitter: 0 },
  })
  world.t = await startGateway({ transport, allowPrivateUrls: true })
  world.authkey = (await world.t.register()).authkey
  const created = await world.t.post('/api/v2/qrcode', { authkey: world.authkey, setAppkey: 'loja', webhook: world.receiver.url })
  assert.is(created.status, 200, created.text)
  world.device = { id: created.body.id, appkey: created.body.appkey }
  await world.peer.phone(SHOP).scan(qrText(created.body.qrcode))
  await waitFor(
    async () =>
      (await world.t.post('/api/developer', { authkey: world.authkey, message: 'loja', checkDispositivo: 'true' })).body?.dispositivo?.conectado === true,
    10_000,
    'connected',
  )
})

media.after(async world => {
  await world.t?.stop()
  await world.receiver?.stop()
  await world.peer?.close()
  world.restoreRoot?.()
})

media('an image the gateway sends is uploaded to the media host named by media_conn; the phone downloads and decrypts exactly those bytes', async world => {
  const { t, peer, authkey, device } = world
  const friend = peer.phone(FRIEND)
  const sent = await t.post('/api/create-message', {
    appkey: device.appkey,
    authkey,
    to: FRIEND,
    file: IMAGE.toString('base64'),
    message: 'foto.png',
    descricao: 'Nossa loja',
  })
  assert.is(sent.status, 200, sent.text)
  await waitFor(() => friend.inbox.some(m => m.id === sent.body.id), 15_000, `the phone to get the image (problems: ${peer.records.problems.join('; ')})`)
  const image = friend.inbox.find(m => m.id === sent.body.id)!.message.imageMessage
  assert.ok(image, `an imageMessage (got ${JSON.stringify(Object.keys(friend.inbox.find(m => m.id === sent.body.id)!.message))})`)
  assert.is(image!.caption, 'Nossa loja')
  assert.ok(image!.url?.startsWith(`https://${peer.media!.hostname}/`), image!.url ?? '')
  const bytes = await peer.media!.download(image!, 'image')
  assert.ok(bytes.equals(IMAGE), 'the decrypted bytes are the original image')
  assert.equal(
    peer.records.unknownIqs.map(iq => iq.attrs.xmlns),
    [],
  )
})

media('an image a phone sends is downloaded and decrypted by the gateway: the Imagem webhook carries exactly its bytes', async world => {
  const { peer, receiver, device } = world
  const friend = peer.phone(FRIEND)
  const photo = Buffer.concat([PNG, randomBytes(3000)])
  const sent = await friend.sendImage(SHOP, photo, { caption: 'Olha isso' })
  const find = () => receiver.hooks.map(h => h.payload).find(p => p?.idMessagem === sent.id)
  await waitFor(() => !!find(), 15_000, `the webhook of ${sent.id}`)
  const hook = find()
  assert.equal([hook.event, hook.device, hook.from, hook.caption, hook.mimetype], ['Imagem', device.id, FRIEND, 'Olha isso', 'image/png'])
  assert.ok(Buffer.from(hook.base64 ?? '', 'base64').equals(photo), 'the webhook carries the decrypted bytes')
})

media.run()
