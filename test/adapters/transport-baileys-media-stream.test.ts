import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createHash } from 'node:crypto'
import { readFile, rm } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { encryptedStream } from '@whiskeysockets/baileys'
import { baileysTransport } from '../../adapters/transport-baileys/index.ts'
import { internalsOf } from '../../src/internals.ts'
import { BOB_JID, waMessage } from '../helpers/baileys-fixtures.ts'
import { FakeBaileys } from '../helpers/fake-baileys/index.ts'
import { connectedBaileysDevice } from '../helpers/baileys-gateway.ts'
import { startGateway } from '../helpers/gateway.ts'
import { startReceiver } from '../helpers/receiver.ts'

/**
 * `GET /media/:token` over the Baileys transport's own download: a received file is decrypted and
 * served as it arrives (memory bounded by the stream buffers, not the file), and a download failing
 * part-way cuts the answer: the client never gets a 200 whose shorter body looks whole.
 */
const stream = suite('Baileys transport: GET /media/:token streams received media')

const MB = 2 ** 20
const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex')

/** A media host serving one encrypted file: `/whole`; `/gated` (the first MiB, then the rest once opened); `/cut` (the first MiB, then the connection cut); `/tampered` (whole, one byte flipped). */
async function mediaHost(file: Buffer) {
  let open!: () => void
  const gate = new Promise<void>(resolve => (open = resolve))
  const written: Record<string, number> = {}
  const server = createServer(async (req, res) => {
    const path = req.url ?? '/'
    const send = (bytes: Buffer) => (res.write(bytes), (written[path] = (written[path] ?? 0) + bytes.length))
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': file.length })
    if (path === '/tampered') return void res.end(Buffer.concat([file.subarray(0, 100), Buffer.from([file[100]! ^ 1]), file.subarray(101)]))
    if (path === '/whole') return void res.end(file)
    send(file.subarray(0, MB))
    if (path === '/cut') return void setTimeout(() => res.destroy(), 50)
    await gate
    send(file.subarray(MB))
    res.end()
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`
  return { host, written, open, stop: () => (server.closeAllConnections(), new Promise(resolve => server.close(resolve))) }
}

/** A gateway over the Baileys transport (its default media download) on a fake network, one connected device whose events go to a receiver. */
async function start(mediaHosts: string[], sendTimeoutMs?: number) {
  const fake = new FakeBaileys()
  const transport = baileysTransport({
    ...fake.transportOptions(),
    downloadMedia: undefined,
    mediaHosts,
    inlineMediaMaxBytes: 10,
    ...(sendTimeoutMs ? { sendTimeoutMs } : {}),
  })
  const t = await startGateway({ transport, allowPrivateUrls: true })
  ;(internalsOf(t.gateway).resolved as { baseUrl?: string }).baseUrl = t.url
  const receiver = await startReceiver()
  const { authkey } = await t.register()
  const device = await connectedBaileysDevice(t, fake, authkey, { webhook: receiver.url })
  return { t, fake, receiver, device, stop: async () => (await t.stop(), await receiver.stop()) }
}

async function encrypted(size: number) {
  const plain = Buffer.alloc(size)
  for (let i = 0; i < size; i += 4096) plain.writeUInt32LE(i, i) // not all zeros, so a misplaced block shows
  const e = await encryptedStream(plain, 'document')
  const file = await readFile(e.encFilePath)
  await rm(e.encFilePath, { force: true })
  return { plain, file, mediaKey: e.mediaKey }
}

stream('the first bytes reach the client while the media host has not sent the rest, and the whole file arrives decrypted', async () => {
  const { plain, file, mediaKey } = await encrypted(8 * MB)
  const host = await mediaHost(file)
  const g = await start([host.host])
  try {
    const document = { url: `http://${host.host}/gated`, mediaKey, mimetype: 'application/pdf', fileName: 'big.pdf', fileLength: plain.length }
    await g.fake.deliver(g.device.id, waMessage({ chat: BOB_JID, id: 'BIG', message: { documentMessage: document } }))
    const [event] = (await g.receiver.waitForHooks(1), g.receiver.verified(g.device.webhookSecret))
    assert.ok(event.url, 'the event carries a media url')
    const fetching = fetch(event.url)
    fetching.catch(() => undefined) // an answer that never began fails when the test stops
    const answer = await Promise.race([fetching, new Promise<undefined>(resolve => setTimeout(() => resolve(undefined), 5_000))])
    assert.ok(answer, 'the answer began while the media host held back all but its first MiB (before: only once the whole file was read)')
    assert.is(answer.status, 200)
    const reader = answer.body!.getReader()
    const chunks: Buffer[] = []
    let received = 0
    while (received < MB / 2) {
      const { value } = await reader.read()
      chunks.push(Buffer.from(value!))
      received += value!.length
    }
    assert.is(host.written['/gated'], MB, 'half a MiB decrypted and delivered while the host has sent 1 of its 8 MiB')
    host.open()
    for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(Buffer.from(next.value))
    assert.is(sha(Buffer.concat(chunks)), sha(plain), 'the whole file, decrypted')
  } finally {
    host.open()
    await g.stop()
    await host.stop()
  }
})

stream('a download failing part-way (connection cut, or a MAC that does not match) ends the answer as an error, never as a complete 200', async () => {
  const { plain, file, mediaKey } = await encrypted(4 * MB)
  const host = await mediaHost(file)
  const g = await start([host.host])
  try {
    const document = (path: string) => ({
      url: `http://${host.host}${path}`,
      mediaKey,
      mimetype: 'application/pdf',
      fileName: 'f.pdf',
      fileLength: plain.length,
    })
    for (const [i, path] of ['/whole', '/cut', '/tampered'].entries()) {
      await g.fake.deliver(g.device.id, waMessage({ chat: BOB_JID, id: `M${i}`, message: { documentMessage: document(path) } }))
    }
    await g.receiver.waitForHooks(3)
    const url = Object.fromEntries(g.receiver.verified(g.device.webhookSecret).map(e => [e.idMessagem, e.url]))
    const outcome = async (id: string) => {
      const answer = await fetch(url[id])
      const body = await answer.arrayBuffer().then(
        b => Buffer.from(b),
        () => 'cut' as const,
      )
      return {
        status: answer.status,
        body: body === 'cut' ? body : body.length === plain.length && sha(body) === sha(plain) ? 'whole' : `${body.length} bytes`,
      }
    }
    assert.equal(await outcome('M0'), { status: 200, body: 'whole' })
    for (const id of ['M1', 'M2']) {
      const { status, body } = await outcome(id)
      assert.ok(status !== 200 || body === 'cut', `${id}: ${status} with ${body}`)
    }
  } finally {
    await g.stop()
    await host.stop()
  }
})

stream(
  'a slow client gets the whole file however long it takes, while bytes keep coming; a media host that stops sending is cut after sendTimeoutMs',
  async () => {
    const { plain, file, mediaKey } = await encrypted(16 * MB)
    const host = await mediaHost(file)
    const g = await start([host.host], 800)
    try {
      const document = (path: string, id: string) => ({
        url: `http://${host.host}${path}`,
        mediaKey,
        mimetype: 'application/pdf',
        fileName: `${id}.pdf`,
        fileLength: plain.length,
      })
      await g.fake.deliver(g.device.id, waMessage({ chat: BOB_JID, id: 'SLOW', message: { documentMessage: document('/whole', 'SLOW') } }))
      await g.fake.deliver(g.device.id, waMessage({ chat: BOB_JID, id: 'STALL', message: { documentMessage: document('/gated', 'STALL') } }))
      await g.receiver.waitForHooks(2)
      const url = Object.fromEntries(g.receiver.verified(g.device.webhookSecret).map(e => [e.idMessagem, e.url]))
      // About 6 MiB a second: the 16 MiB take over twice the deadline, more than the socket buffers between can hold.
      const answer = await fetch(url.SLOW)
      assert.is(answer.status, 200)
      const reader = answer.body!.getReader()
      const chunks: Buffer[] = []
      const started = Date.now()
      let failure: unknown
      try {
        for (let next = await reader.read(); !next.done; next = await reader.read()) {
          chunks.push(Buffer.from(next.value))
          await new Promise(resolve => setTimeout(resolve, (next.value.length / (6 * MB)) * 1000))
        }
      } catch (err) {
        failure = err
      }
      const received = Buffer.concat(chunks)
      assert.is(failure, undefined, `the slow read was cut after ${received.length} bytes (before: at the deadline from the request)`)
      assert.ok(Date.now() - started > 1_600, 'the read took longer than twice the deadline')
      assert.is(sha(received), sha(plain), 'the whole file, decrypted')

      const stalled = await fetch(url.STALL)
      assert.is(stalled.status, 200)
      const outcome = await stalled.arrayBuffer().then(
        b => `${b.byteLength} bytes, ended as if whole`,
        () => 'cut',
      )
      assert.is(outcome, 'cut', 'a host that sent 1 MiB and then nothing: the answer is cut, never ended as a whole file')
    } finally {
      host.open()
      await g.stop()
      await host.stop()
    }
  },
)

stream.run()
