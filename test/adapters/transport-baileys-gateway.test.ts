import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { WAMessage } from '@whiskeysockets/baileys'
import type { MediaLinks } from '../../src/domain/media-links.ts'
import type { Logger } from '../../src/logger.ts'
import { baileysTransport } from '../../adapters/transport-baileys/index.ts'
import type { BaileysTransportOptions } from '../../adapters/transport-baileys/options.ts'
import { internalsOf } from '../../src/internals.ts'
import { BOB_JID, BOB_LID, GROUP, waMessage } from '../helpers/baileys-fixtures.ts'
import { FakeBaileys, type FakeBehaviour } from '../helpers/fake-baileys/index.ts'
import { connectedBaileysDevice } from '../helpers/baileys-gateway.ts'
import { startGateway, waitFor } from '../helpers/gateway.ts'
import { startReceiver } from '../helpers/receiver.ts'

const gateway = suite('Baileys transport behind the HTTP API: what the user is told')

const BOB = '5511888880000'

/** A gateway over the Baileys transport on a fake network; `lines` records what was logged at error level. */
async function start(behaviour: FakeBehaviour = {}, options: Partial<BaileysTransportOptions> = {}) {
  const fake = new FakeBaileys(behaviour)
  const lines: { obj: unknown; msg?: string }[] = []
  const record = (obj: unknown, msg?: string) => void lines.push({ obj, msg })
  const logger: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: record }
  const transport = baileysTransport({ ...fake.transportOptions(), reconnect: { initialDelayMs: 5, maxDelayMs: 40, jitter: 0 }, ...options })
  const t = await startGateway({ transport, logger, allowPrivateUrls: true })
  const { authkey } = await t.register()
  return { t, fake, authkey, lines }
}

/** Device `loja` with the webhook `webhook`, linked on the fake network (phone 5511999990000) and reported connected. */
async function connectedDevice({ t, fake, authkey }: Pick<Awaited<ReturnType<typeof start>>, 't' | 'fake' | 'authkey'>, webhook: string) {
  return connectedBaileysDevice(t, fake, authkey, { webhook })
}

gateway('an account WhatsApp refuses (403, banned) is left closed: not logged in again at every heartbeat', async () => {
  const fake = new FakeBaileys()
  const options = fake.transportOptions()
  let banned = false
  // Once banned, every new socket is closed 403 as soon as it opens (as WhatsApp answers a blocked account's login).
  const socketFactory: typeof options.socketFactory = (config, info) => {
    const socket = options.socketFactory(config, info)
    if (banned) setTimeout(() => void (socket as unknown as { close(code: number): Promise<void> }).close(403), 20)
    return socket
  }
  const logger: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined }
  const transport = baileysTransport({ ...options, socketFactory, reconnect: { initialDelayMs: 5, maxDelayMs: 40, jitter: 0 } })
  const t = await startGateway({ transport, logger, allowPrivateUrls: true, instances: { heartbeatMs: 200, ttlMs: 2_000 } })
  try {
    const { authkey } = await t.register()
    const device = await connectedDevice({ t, fake, authkey }, 'https://hooks.example.com/loja')
    banned = true
    const sockets = fake.socketsOf(device.id).length
    await fake.current(device.id).close(403)
    const state = async () => (await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' })).body.dispositivo
    await waitFor(async () => (await state())?.estado === 'closed', 5_000, 'closed')
    await new Promise(resolve => setTimeout(resolve, 10 * 200)) // ten heartbeats
    assert.is(fake.socketsOf(device.id).length, sockets, 'no new login with the refused account (one every heartbeat before)')
    assert.is((await state())?.estado, 'closed')
  } finally {
    await t.stop()
  }
})

gateway(
  'operations 3 and 4 answer 503 "cannot be reached" when WhatsApp cannot be reached (DNS failure), never 504 "QR expired"; the cause is logged',
  async () => {
    const { t, authkey, lines } = await start({ failToConnect: 'ENOTFOUND' })
    try {
      const qr = await t.post('/api/v2/qrcode', { authkey, setAppkey: 'loja' })
      assert.is(qr.status, 503, qr.text)
      assert.equal(qr.body, { status: 503, message: 'O WhatsApp não pode ser acessado a partir deste servidor. Tente novamente mais tarde.' })
      const add = await t.post('/api/developer', { authkey, message: 'recepcao', conecteQR: 'true' })
      assert.is(add.status, 503, add.text)
      assert.is(add.body.message, 'O WhatsApp não pode ser acessado a partir deste servidor. Tente novamente mais tarde.')
      const logged = JSON.stringify(
        lines.map(line => line.obj),
        (_, value) => (value instanceof Error ? { message: value.message, cause: value.cause } : value),
      )
      assert.match(logged, /getaddrinfo ENOTFOUND web\.whatsapp\.com/, 'the cause is in the log')
    } finally {
      await t.stop()
    }
  },
)

gateway('a QR that expires unscanned is answered 200 first; the device status then says closed (the expiry is not "unreachable")', async () => {
  const { t, fake, authkey } = await start()
  try {
    const qr = await t.post('/api/v2/qrcode', { authkey, setAppkey: 'loja' })
    assert.is(qr.status, 200, qr.text)
    await fake.current(qr.body.id).expireQr()
    await waitFor(
      async () => (await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' })).body.dispositivo?.estado === 'closed',
      5_000,
      'closed',
    )
  } finally {
    await t.stop()
  }
})

gateway('a message WhatsApp reports as not delivered reaches the device webhook as a signed Falha event of its own', async () => {
  const receiver = await startReceiver()
  const { t, fake, authkey } = await start()
  try {
    const device = await connectedDevice({ t, fake, authkey }, receiver.url)
    const sent = await t.post('/api/create-message', { appkey: device.appkey, authkey, to: BOB, message: 'Olá' })
    assert.is(sent.status, 200, sent.text)
    await receiver.waitForHooks(1)
    fake.current(device.id).errorAck(`${BOB}@s.whatsapp.net`, sent.body.id, '463')
    const hooks = await receiver.waitForHooks(2)
    const [text, failure] = receiver.verified(device.webhookSecret)
    assert.is(text.event, 'Texto')
    const { timestamp, ...rest } = failure
    assert.equal(rest, {
      event: 'Falha',
      idMessagem: sent.body.id,
      device: device.id,
      chat: BOB,
      from: '5511999990000',
      to: BOB,
      fromMe: true,
      isGroup: false,
      code: 463,
      reason: 'not delivered: the account is restricted, or has no privacy token for this contact yet (463)',
    })
    assert.type(timestamp, 'number')
    assert.is.not(hooks[1].headers['webhook-id'], hooks[0].headers['webhook-id'], "its own webhook-id, not the message event's")
  } finally {
    await t.stop()
    await receiver.stop()
  }
})

gateway(
  "a sent text's Texto names the chat as the contact's replies and the send's Falha do: a Brazilian mobile's registered form, a LID's phone",
  async () => {
    const receiver = await startReceiver()
    const { t, fake, authkey } = await start()
    const [WRITTEN, REGISTERED] = ['5511977776666', '551177776666'] // registered without its ninth digit
    fake.canonical.set(WRITTEN, REGISTERED)
    fake.lidMappings.set(BOB_LID, BOB_JID)
    try {
      const device = await connectedDevice({ t, fake, authkey }, receiver.url)
      const hooks = () => receiver.verified(device.webhookSecret)
      for (const [to, jid, phone] of [
        [WRITTEN, `${REGISTERED}@s.whatsapp.net`, REGISTERED],
        [BOB_LID, BOB_LID, BOB],
      ]) {
        const sent = await t.post('/api/create-message', { appkey: device.appkey, authkey, to, message: 'Pedido saiu' })
        assert.is(sent.status, 200, sent.text)
        await fake.deliver(device.id, waMessage({ chat: jid, id: `REPLY-${phone}`, message: { conversation: 'Obrigado' } }))
        fake.current(device.id).errorAck(jid, sent.body.id, '463')
        await waitFor(() => hooks().filter(h => h.idMessagem === sent.body.id).length === 2 && hooks().some(h => h.idMessagem === `REPLY-${phone}`))
        const text = hooks().find(h => h.idMessagem === sent.body.id && h.event === 'Texto')
        const failure = hooks().find(h => h.idMessagem === sent.body.id && h.event === 'Falha')
        const reply = hooks().find(h => h.idMessagem === `REPLY-${phone}`)
        assert.equal([reply.chat, failure.chat, failure.to], [phone, phone, phone], `to ${to}`)
        assert.equal([text.chat, text.to], [phone, phone], `the Texto of the text sent to ${to}`)
      }
    } finally {
      await t.stop()
      await receiver.stop()
    }
  },
)

gateway("large media: each event's url serves its own message, also when a contact reuses the id in another chat or group sender", async () => {
  const receiver = await startReceiver()
  // Bytes that say which message the adapter downloaded: its chat and group sender.
  const downloadMedia = async (m: WAMessage) => Buffer.from(`${m.key.remoteJid} ${m.key.participant ?? '-'}`)
  const { t, fake, authkey } = await start({}, { inlineMediaMaxBytes: 10, downloadMedia })
  try {
    ;(internalsOf(t.gateway).resolved as { baseUrl?: string }).baseUrl = t.url
    const device = await connectedDevice({ t, fake, authkey }, receiver.url)
    const pdf = { documentMessage: { mimetype: 'application/pdf', fileName: 'doc.pdf', fileLength: 5_000 } }
    const CAROL_JID = '5511977770003@s.whatsapp.net'
    await fake.deliver(device.id, [
      waMessage({ chat: BOB_JID, id: 'SAMEID', message: pdf }),
      waMessage({ chat: CAROL_JID, id: 'SAMEID', message: pdf }),
      waMessage({ chat: GROUP, id: 'SAMEID', participant: BOB_LID, participantAlt: BOB_JID, message: pdf }),
      waMessage({ chat: GROUP, id: 'SAMEID', participant: CAROL_JID, message: pdf }),
    ])
    await receiver.waitForHooks(4)
    const served = await Promise.all(receiver.verified(device.webhookSecret).map(async e => [e.chat, e.from, await (await fetch(e.url)).text()]))
    // Which message each url serves is tested here, not the order the four events arrive in (the group's may come later): compared sorted.
    assert.equal(
      served.sort(),
      [
        [BOB, BOB, `${BOB_JID} -`],
        ['5511977770003', '5511977770003', `${CAROL_JID} -`],
        [GROUP, BOB, `${GROUP} ${BOB_LID}`],
        [GROUP, '5511977770003', `${GROUP} ${CAROL_JID}`],
      ].sort(),
    )
    // A link of 0.1.0 or earlier names the id alone: served only when no other message has that id.
    const { mediaLinks } = internalsOf(t.gateway) as unknown as { mediaLinks: MediaLinks }
    await fake.deliver(device.id, waMessage({ chat: BOB_JID, id: 'ALONE', message: pdf }))
    const legacy = async (id: string) => (await fetch(`${t.url}/media/${await mediaLinks.sign({ deviceId: device.id, message: { id } })}`)).status
    assert.equal([await legacy('ALONE'), await legacy('SAMEID')], [200, 404])
  } finally {
    await t.stop()
    await receiver.stop()
  }
})

gateway.run()
