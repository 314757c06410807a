import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { httpMediaFetcher } from '../../adapters/media-http/index.ts'
import { localServer } from '../helpers/hostile.ts'

/**
 * A redirect's own body is not the file: got drains it (`response.resume()`) with its timers cancelled and
 * nothing counting its bytes, so an endless body after a 302 is read on and on, after the download is
 * over, past `maxBytes` and the time-out, one connection per send.
 */
const test = suite('media redirect bodies are not read without bound')

test('an endless body after a 302 stops being read once the download is over', async () => {
  let written = 0
  let redirectOpen = false
  const chunk = Buffer.alloc(64 * 1024, 120)
  const server = await localServer((req, res) => {
    if (req.url !== '/r') return res.writeHead(200, { 'content-type': 'text/plain' }).end('the file')
    redirectOpen = true
    res.writeHead(302, { location: '/file', 'content-type': 'text/plain' })
    const pump = () => {
      while (!res.destroyed) {
        written += chunk.length
        if (!res.write(chunk)) return void res.once('drain', pump)
      }
    }
    res.on('close', () => (redirectOpen = false))
    pump()
  })
  const media = httpMediaFetcher({ isAllowedAddress: a => a === '127.0.0.1' })
  try {
    const file = await media.fetch(`${server.url}/r`, { maxBytes: 1024, timeoutMs: 1000 })
    assert.equal(file.data.toString(), 'the file')
    await new Promise(resolve => setTimeout(resolve, 1500)) // past the time-out
    const before = written
    await new Promise(resolve => setTimeout(resolve, 500))
    assert.equal(
      redirectOpen,
      false,
      `the redirect's body is still being read: ${(written / 2 ** 20).toFixed(0)} MiB so far, ${((written - before) / 2 ** 20).toFixed(0)} MiB in the last 0.5 s (maxBytes 1024, time-out 1 s)`,
    )
  } finally {
    await server.stop()
  }
})

test.run()
