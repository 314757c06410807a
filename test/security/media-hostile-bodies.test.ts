import assert from 'node:assert/strict'
import { gzipSync } from 'node:zlib'
import { suite } from 'uvu'
import { httpMediaFetcher } from '../../adapters/media-http/index.ts'
import { localServer, type LocalServer } from '../helpers/hostile.ts'

/**
 * Bodies a hostile file server sends the media fetcher: the size cap holds on the bytes as they are
 * decoded (got decompresses gzip), and a Content-Length the body does not fill is a failed download,
 * never a shorter file taken as whole. (An endless body and a slow one: test/operations/send-media-url.test.ts.)
 */
const test = suite<{ server: LocalServer }>('hostile media bodies')

const BOMB = gzipSync(Buffer.alloc(64 * 2 ** 20)) // 64 MiB of zeros in about 64 KiB
const limits = { maxBytes: 2 ** 20, timeoutMs: 5000 }

test.before(async ctx => {
  ctx.server = await localServer((req, res) => {
    if (req.url === '/bomb.png')
      return void res.writeHead(200, { 'content-type': 'image/png', 'content-encoding': 'gzip', 'content-length': BOMB.length }).end(BOMB)
    if (req.url === '/short.png') {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': 1000 }).write('only a few bytes')
      return void setTimeout(() => res.destroy(), 50)
    }
    res.writeHead(404).end()
  })
})
test.after(ctx => ctx.server.stop())

test('a gzip bomb is counted as it is decompressed: past maxBytes it is too large, however small on the wire', async ({ server }) => {
  const media = httpMediaFetcher({ isAllowedAddress: a => a === '127.0.0.1' })
  await assert.rejects(media.fetch(`${server.url}/bomb.png`, limits), { name: 'MediaFetchError', reason: 'too-large' })
})

test('a body shorter than its Content-Length fails the download', async ({ server }) => {
  const media = httpMediaFetcher({ isAllowedAddress: a => a === '127.0.0.1' })
  await assert.rejects(media.fetch(`${server.url}/short.png`, limits), { name: 'MediaFetchError', reason: 'unreachable' })
})

test.run()
