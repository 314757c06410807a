import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { httpMediaFetcher } from '../../adapters/media-http/index.ts'
import { MediaFetchError } from '../../src/ports/media.ts'
import { localServer } from '../helpers/hostile.ts'
import { FRIEND, assertError, sendingGateway } from '../helpers/messaging.ts'

/** mediaTimeoutMs is "time allowed to download a media URL": it must bound the whole download, redirects included. */
const test = suite('media download time-out covers a chain of redirects')

test('a chain of slow redirects is cut at the time-out, not after one time-out per hop', async () => {
  const HOP_MS = 400
  const server = await localServer((req, res) => {
    const n = Number(/\/r(\d)/.exec(req.url ?? '')?.[1] ?? 0)
    setTimeout(() => {
      if (n < 3) res.writeHead(302, { location: `/r${n + 1}` }).end()
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('late bytes')
    }, HOP_MS)
  })
  const media = httpMediaFetcher({ isAllowedAddress: a => a === '127.0.0.1' })
  await media.fetch(`${server.url}/r3`, { maxBytes: 1024, timeoutMs: 5000 }) // got loaded, a connection open: the time below is the download's
  const started = Date.now()
  try {
    const outcome = await media.fetch(`${server.url}/r0`, { maxBytes: 1024, timeoutMs: 500 }).then(
      f => `fetched ${f.data.length} bytes`,
      (e: unknown) => (e instanceof MediaFetchError ? e.reason : String(e)),
    )
    const elapsed = Date.now() - started
    assert.equal(outcome, 'timeout', `after ${elapsed} ms (time-out 500 ms, ${server.requests.length} requests): ${outcome}`)
    assert.ok(elapsed < 1200, `took ${elapsed} ms for a 500 ms time-out`)
  } finally {
    await server.stop()
  }
})

test('at the API: a send whose file URL redirects slowly answers the media time-out (mediaTimeoutMs 500), not the file 1.6 s later', async () => {
  const server = await localServer((req, res) => {
    const n = Number(/\/r(\d)/.exec(req.url ?? '')?.[1] ?? 0)
    setTimeout(() => {
      if (n < 3) res.writeHead(302, { location: `/r${n + 1}` }).end()
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('late bytes')
    }, 400)
  })
  const g = await sendingGateway({ mediaTimeoutMs: 500, media: httpMediaFetcher({ isAllowedAddress: a => a === '127.0.0.1' }) })
  try {
    const started = Date.now()
    const answer = await g.send({ to: FRIEND, file: `${server.url}/r0` })
    const elapsed = Date.now() - started
    assertError(answer, 400, 'Tempo esgotado ao baixar o arquivo da URL.')
    assert.ok(elapsed < 1200, `answered after ${elapsed} ms`)
  } finally {
    await g.stop()
    await server.stop()
  }
})

test.run()
