import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFile, rm } from 'node:fs/promises'
import { Agent, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { encryptedStream } from '@whiskeysockets/baileys'
import type { WAMessage } from '@whiskeysockets/baileys'
import { setupBaileys, type SetupOptions } from '../helpers/baileys-setup.ts'
import { waMessage } from '../helpers/baileys-fixtures.ts'
import { startProxy } from '../helpers/baileys-proxy.ts'
import { waitFor } from '../helpers/fake-baileys/index.ts'
import { readAll } from '../../adapters/transport-baileys/http-get.ts'
import type { Readable } from 'node:stream'

const media = suite('Baileys transport: received media')

const BOB_JID = '5511888880000@s.whatsapp.net'

async function open(options: SetupOptions = {}) {
  const s = await setupBaileys(options)
  await s.linked('dev', '5511999990000')
  return s
}

media("a slow media download does not hold back the device's later messages; the media is reported when its bytes arrive", async () => {
  let release!: (bytes: Buffer) => void
  const slow = new Promise<Buffer>(resolve => (release = resolve))
  const s = await open({ downloadMedia: async (message: WAMessage) => (message.key.id === 'SLOW' ? slow : Buffer.from('fast')) })
  await s.fake.deliver('dev', [
    waMessage({ chat: BOB_JID, id: 'SLOW', message: { imageMessage: { mimetype: 'image/jpeg', fileLength: 4 } } }),
    waMessage({ chat: BOB_JID, id: 'TEXT', message: { conversation: 'after the photo' } }),
    waMessage({ chat: BOB_JID, id: 'QUICK', message: { audioMessage: { mimetype: 'audio/ogg', fileLength: 4 } } }),
  ])
  await waitFor(() => s.messages('dev').length === 2, 'the later messages')
  assert.equal(
    s.messages('dev').map(m => m.id),
    ['TEXT', 'QUICK'],
  )
  release(Buffer.from('slow'))
  await waitFor(() => s.messages('dev').length === 3, 'the slow media')
  assert.equal(s.messages('dev')[2].content, { kind: 'image', mimetype: 'image/jpeg', base64: Buffer.from('slow').toString('base64') })
  await s.transport.stop()
})

media('stop() does not wait for a hanging download: the media is reported with metadata only, its bytes still fetchable later', async () => {
  const s = await open({ downloadMedia: () => new Promise<Buffer>(() => undefined) })
  await s.fake.deliver(
    'dev',
    waMessage({ chat: BOB_JID, id: 'HANGS', message: { documentMessage: { mimetype: 'application/pdf', fileName: 'a.pdf', fileLength: 4 } } }),
  )
  const started = Date.now()
  await s.transport.stop()
  // A stop() that waited for the download would wait for its time-out: sendTimeoutMs, 60 s by default.
  assert.ok(Date.now() - started < 20_000, `stop() took ${Date.now() - started} ms`)
  assert.equal(
    s.messages('dev').map(m => m.content),
    [{ kind: 'document', mimetype: 'application/pdf', fileName: 'a.pdf' }],
  )
  assert.ok(await s.storage.get('device:dev:msg:HANGS'), 'remembered with its media key for a later download')
})

media('through a proxy, received media is fetched over the proxy tunnel and decrypted (MAC checked) from what Baileys encrypts', async () => {
  const plain = Buffer.from('a photo of the menu, as the phone uploaded it')
  const encrypted = await encryptedStream(plain, 'image')
  const file = await readFile(encrypted.encFilePath)
  await rm(encrypted.encFilePath, { force: true })
  const tampered = Buffer.from(file)
  tampered[3] ^= 0xff
  const mediaServer = createServer((req, res) => res.writeHead(200).end(req.url === '/tampered' ? tampered : file))
  await new Promise<void>(resolve => mediaServer.listen(0, '127.0.0.1', resolve))
  const host = `127.0.0.1:${(mediaServer.address() as AddressInfo).port}`
  const proxy = await startProxy()
  const s = await open({ downloadMedia: undefined, proxy: proxy.url, mediaHosts: [host] })
  try {
    const image = (id: string, path: string) =>
      waMessage({
        chat: BOB_JID,
        id,
        message: { imageMessage: { url: `http://${host}${path}`, mediaKey: encrypted.mediaKey, mimetype: 'image/jpeg', fileLength: plain.length } },
      })
    await s.fake.deliver('dev', [image('GOOD', '/menu'), image('BAD', '/tampered')])
    await waitFor(() => s.messages('dev').length === 2, 'both reported')
    const byId = Object.fromEntries(s.messages('dev').map(m => [m.id, m.content]))
    assert.equal(byId.GOOD, { kind: 'image', mimetype: 'image/jpeg', base64: plain.toString('base64') })
    assert.equal(byId.BAD, { kind: 'image', mimetype: 'image/jpeg' }, 'a file failing its MAC is not passed on')
    assert.ok(proxy.tunnels.includes(host), `the downloads went through the proxy: ${proxy.tunnels}`)
    const later = await s.transport.downloadMedia('dev', { chat: BOB_JID, id: 'GOOD', fromMe: false })
    assert.ok(later && !Buffer.isBuffer(later.data), 'a later download (GET /media/:token) is a stream')
    assert.equal({ ...later, data: await readAll(later!.data as Readable) }, { data: plain, mimetype: 'image/jpeg' }, 'and so does a later download')
    const bad = await s.transport.downloadMedia('dev', { chat: BOB_JID, id: 'BAD', fromMe: false })
    await readAll(bad!.data as Readable).then(
      () => assert.unreachable('a stream of a file failing its MAC ended as if whole'),
      (error: Error) => assert.match(error.message, /integrity check/),
    )
  } finally {
    await s.transport.stop()
    await proxy.close()
    await new Promise(resolve => mediaServer.close(resolve))
  }
})

media(
  'received media inlined is downloaded with a bound: a file larger than inlineMediaMaxBytes (its size unannounced) is cut off, not read whole',
  async () => {
    // The announced size (fileLength) is the sender's word, or absent: the download itself must stop.
    const total = 48 * 2 ** 20
    const served: { path: string; written: number; finished: boolean }[] = []
    const mediaServer = createServer((req, res) => {
      const record = { path: req.url ?? '', written: 0, finished: false }
      served.push(record)
      res.writeHead(200, { 'content-type': 'application/octet-stream' })
      const chunk = Buffer.alloc(64 * 1024, 7)
      const pump = () => {
        while (record.written < total) {
          record.written += chunk.length
          if (!res.write(chunk)) return void res.once('drain', pump)
        }
        res.end()
      }
      res.on('finish', () => (record.finished = true))
      pump()
    })
    await new Promise<void>(resolve => mediaServer.listen(0, '127.0.0.1', resolve))
    const host = `127.0.0.1:${(mediaServer.address() as AddressInfo).port}`
    const { mediaKey } = await encryptedStream(Buffer.from('x'), 'document').then(async e => (await rm(e.encFilePath, { force: true }), e))
    const document = (id: string) =>
      waMessage({
        chat: BOB_JID,
        id,
        message: { documentMessage: { url: `http://${host}/${id}`, mediaKey, mimetype: 'application/pdf', fileName: 'big.pdf' } },
      })
    // Baileys' own download (no agent), and the adapter's (through socketConfig.fetchAgent, as through a proxy).
    for (const options of [{}, { socketConfig: { fetchAgent: new Agent() } }] as SetupOptions[]) {
      const s = await open({ ...options, downloadMedia: undefined, mediaHosts: [host], inlineMediaMaxBytes: 64 * 1024, sendTimeoutMs: 20_000 })
      try {
        const id = options.socketConfig ? 'AGENT' : 'DIRECT'
        await s.fake.deliver('dev', document(id))
        await waitFor(() => s.messages('dev').length === 1, `${id}: reported`, 20_000)
        assert.equal(s.messages('dev')[0].content, { kind: 'document', mimetype: 'application/pdf', fileName: 'big.pdf' }, `${id}: metadata only`)
        const record = served.find(r => r.path === `/${id}`)!
        assert.ok(
          !record.finished && record.written < total / 2,
          `${id}: the download stopped early (${record.written} of ${total} bytes written, finished: ${record.finished})`,
        )
      } finally {
        await s.transport.stop()
      }
    }
    await new Promise(resolve => mediaServer.close(resolve))
  },
)

media.run()
