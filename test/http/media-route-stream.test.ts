import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { Readable } from 'node:stream'
import type { MediaLinks } from '../../src/domain/media-links.ts'
import type { ReceivedMedia } from '../../src/ports/transport.ts'
import { internalsOf } from '../../src/internals.ts'
import { startGateway } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'

const test = suite('GET /media/:token with a transport that gives a stream')

/** A gateway whose transport serves every media link with `media()`; the link of one message of a linked device. */
async function serving(media: () => ReceivedMedia) {
  const t = await startGateway()
  const { authkey } = await t.register()
  const device = await t.linkedDevice(authkey, 'midia', '5511944443340')
  const { transport, mediaLinks } = internalsOf(t.gateway) as { transport: { downloadMedia?: unknown }; mediaLinks: MediaLinks }
  transport.downloadMedia = async () => media()
  return { t, url: `${t.url}/media/${await mediaLinks.sign({ deviceId: device.id, message: { id: '3EB0STREAM' } })}` }
}

const chunk = Buffer.alloc(64 * 1024, 1)

test('a stream is served as it comes, whole when it ends', async () => {
  const { t, url } = await serving(() => ({ data: Readable.from([chunk, chunk, chunk]), mimetype: 'video/mp4', fileName: 'v.mp4' }))
  try {
    const answer = await fetch(url)
    assert.is(answer.status, 200)
    assert.is(answer.headers.get('content-type'), 'video/mp4')
    assert.is((await answer.arrayBuffer()).byteLength, 3 * chunk.length)
  } finally {
    await t.stop()
  }
})

test('a stream failing before its first bytes is answered 502, as a failed download', async () => {
  const failing = () => new Readable({ read() { this.destroy(new Error('media host gone')) } }) // prettier-ignore
  const { t, url } = await serving(() => ({ data: failing(), mimetype: 'application/pdf' }))
  try {
    const answer = await request(url)
    assert.is(answer.status, 502)
    assert.is(answer.body.status, 502)
  } finally {
    await t.stop()
  }
})

test('a stream failing part-way cuts the answer: the client sees an incomplete body, never a complete 200', async () => {
  let sent = 0
  const cut = new Readable({
    read() {
      if (sent++ < 3) this.push(chunk)
      else setTimeout(() => this.destroy(new Error('connection to the media host reset')), 20)
    },
  })
  const { t, url } = await serving(() => ({ data: cut, mimetype: 'application/pdf' }))
  try {
    const answer = await fetch(url)
    assert.is(answer.status, 200, 'the answer had begun')
    const read = await answer.arrayBuffer().then(
      b => `${b.byteLength} bytes, ended`,
      () => 'failed',
    )
    assert.is(read, 'failed')
  } finally {
    await t.stop()
  }
})

test.run()
