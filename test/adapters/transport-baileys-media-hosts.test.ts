import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { rm } from 'node:fs/promises'
import { Agent, createServer as createHttpServer } from 'node:http'
import { createServer, type AddressInfo } from 'node:net'
import { encryptedStream } from '@whiskeysockets/baileys'
import { setupBaileys, type SetupOptions } from '../helpers/baileys-setup.ts'
import { waMessage } from '../helpers/baileys-fixtures.ts'
import { waitFor } from '../helpers/fake-baileys/index.ts'
import type { SocketLike } from '../../adapters/transport-baileys/types.ts'

/**
 * A received media message's `url` and `directPath` are written by whoever sent it: any WhatsApp
 * user can make the gateway fetch `http://169.254.169.254/...` (no directPath), or, with a directPath
 * of `@host:port/x`, `https://mmg.whatsapp.net@host:port/x`. Only WhatsApp's media hosts (https,
 * `*.whatsapp.net`) and the hosts given in `mediaHosts` are fetched from.
 */
const hosts = suite('Baileys transport: received media is fetched from WhatsApp media hosts only')

const BOB_JID = '5511888880000@s.whatsapp.net'

hosts('a sender-written url or directPath pointing inside is never connected to, by either downloader', async () => {
  const connections: string[] = []
  const inside = createServer(socket => {
    connections.push(String(socket.remoteAddress))
    socket.destroy()
  })
  await new Promise<void>(resolve => inside.listen(0, '127.0.0.1', resolve))
  const host = `127.0.0.1:${(inside.address() as AddressInfo).port}`
  const { mediaKey } = await encryptedStream(Buffer.from('x'), 'image').then(async e => (await rm(e.encFilePath, { force: true }), e))
  const hostile = (id: string, fields: Record<string, string>) =>
    waMessage({ chat: BOB_JID, id, message: { imageMessage: { ...fields, mediaKey, mimetype: 'image/jpeg', fileLength: 1 } } })
  // Baileys' own download (no agent), and the adapter's (through socketConfig.fetchAgent, as through a proxy).
  for (const options of [{}, { socketConfig: { fetchAgent: new Agent() } }] as SetupOptions[]) {
    const s = await setupBaileys({ ...options, downloadMedia: undefined, sendTimeoutMs: 5_000 })
    try {
      await s.linked('dev', '5511999990000')
      await s.fake.deliver('dev', [
        hostile('URL', { url: `http://${host}/latest/meta-data/` }),
        hostile('PATH', { directPath: `@${host}/v/t62` }),
        hostile('BOTH', { url: `https://mmg.whatsapp.net/v/t62`, directPath: `@${host}/v/t62` }),
      ])
      await waitFor(() => s.messages('dev').length === 3, 'all three reported')
      for (const m of s.messages('dev')) assert.equal(m.content, { kind: 'image', mimetype: 'image/jpeg' }, `${m.id}: metadata only`)
      // A later download (GET /media/:token) is refused too.
      await s.transport.downloadMedia('dev', { chat: BOB_JID, id: 'URL', fromMe: false }).then(
        () => assert.unreachable('the download of URL went through'),
        () => undefined,
      )
    } finally {
      await s.transport.stop()
    }
  }
  await new Promise(resolve => inside.close(resolve))
  assert.equal(connections, [], 'no connection reached the inside host')
})

hosts('`mediaHosts` names another media host (a local peer); WhatsApp media URLs pass, other hosts are refused', async () => {
  const { mediaUrlRefusal } = await import('../../adapters/transport-baileys/media-download.ts')
  const lib = await import('@whiskeysockets/baileys')
  const refusal = (media: Record<string, string>, extra: string[] = []) => mediaUrlRefusal(lib, media, extra)
  assert.is(refusal({ url: 'https://mmg.whatsapp.net/v/t62.7118-24/1.enc', directPath: '/v/t62.7118-24/1.enc' }), undefined)
  assert.is(refusal({ directPath: '/v/t62.7118-24/1.enc' }), undefined)
  assert.is(refusal({ url: 'https://media.fgru3-1.fna.whatsapp.net/v/t62/1.enc' }), undefined)
  assert.ok(refusal({ url: 'http://mmg.whatsapp.net/v/1.enc' }), 'plain http')
  assert.ok(refusal({ url: 'https://mmg.whatsapp.net.example.com/v/1.enc' }), 'a look-alike host')
  assert.ok(refusal({ directPath: '.example.com/v/1.enc' }), 'a directPath that extends the host')
  assert.ok(refusal({ thumbnailDirectPath: '@10.0.0.1/x' }), 'a thumbnail directPath')
  assert.is(refusal({ url: 'https://127.0.0.1:8443/mms/1' }, ['127.0.0.1:8443']), undefined)
  assert.ok(refusal({ url: 'https://127.0.0.1:9999/mms/1' }, ['127.0.0.1:8443']), 'another port')
})

hosts("a file WhatsApp no longer has (404) is asked of the phone again, and the new message's media host is checked as the first one's", async () => {
  const { streamMedia } = await import('../../adapters/transport-baileys/media-download.ts')
  const lib = await import('@whiskeysockets/baileys')
  const paths: string[] = []
  const server = createHttpServer((req, res) => {
    paths.push(req.url ?? '')
    res.writeHead(req.url === '/gone' ? 404 : 200).end('x'.repeat(26))
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`
  const { mediaKey } = await encryptedStream(Buffer.from('x'), 'image').then(async e => (await rm(e.encFilePath, { force: true }), e))
  const image = (fields: Record<string, string>) =>
    waMessage({ chat: BOB_JID, id: 'R', message: { imageMessage: { ...fields, mediaKey, mimetype: 'image/jpeg' } } })
  const download = (answer: ReturnType<typeof image>) =>
    streamMedia(image({ url: `http://${host}/gone` }), {
      lib,
      socket: { updateMediaMessage: async () => answer } as unknown as SocketLike,
      timeoutMs: 5_000,
      mediaHosts: [host],
    })
  try {
    const fine = await download(image({ url: `http://${host}/again` }))
    fine.destroy()
    assert.equal(paths, ['/gone', '/again'], 'the re-uploaded file is fetched from its (allowed) host')
    await download(image({ directPath: '.attacker.example/x' })).then(
      () => assert.unreachable('a re-upload naming another host was taken'),
      (err: Error) => assert.match(err.message, /received media not downloaded/),
    )
    assert.equal(paths, ['/gone', '/again', '/gone'], 'nothing asked of the other host')
  } finally {
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))
  }
})

hosts.run()
