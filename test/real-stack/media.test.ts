import { randomBytes } from 'node:crypto'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { waitFor } from '../helpers/gateway.ts'
import { startRealStack, type RealStack } from '../helpers/real-stack.ts'
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

type World = RealStack

media.before(async world => {
  // The peer runs its media host; the transport trusts its CA (peerTransport does, through socketConfig.fetchAgent).
  Object.assign(world, await startRealStack({ peer: { media: true } }))
})

media.after(async world => {
  await world.close?.()
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
