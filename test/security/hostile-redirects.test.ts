import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { httpMediaFetcher } from '../../adapters/media-http/index.ts'
import type { LookupFunction } from '../../src/security/address-guard.ts'
import { fakeDns, localServer, redirector, type LocalServer } from '../helpers/hostile.ts'
import { FRIEND, assertError, assertOk, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'
import { PNG } from '../helpers/samples.ts'

/**
 * Redirects and DNS, through the real media fetcher. There is no public address on a test machine, so
 * the fetcher's address policy (its `isAllowedAddress` seam) treats 127.0.0.1 as public and every
 * other private address as private: 127.0.0.2 plays the internal server, and a fake DNS (the
 * `lookup` seam) gives names to both.
 */
type Ctx = { g: SendingGateway; files: LocalServer; hop: LocalServer; secret: LocalServer; via: (target: string, status?: number) => string }
const test = suite<Ctx>('media redirects and names pointing inside are refused')

const dns = fakeDns({
  'files.test': ['127.0.0.1'],
  'inside.test': ['127.0.0.2'],
  'inside.test.': ['127.0.0.2'],
  'metadata.test': ['169.254.169.254'],
  'both.test': ['127.0.0.1', '127.0.0.2'],
})

test.before(async ctx => {
  ctx.files = await localServer((req, res) =>
    res
      .writeHead(200, { 'content-type': 'image/png', ...(req.url === '/cd' ? { 'content-disposition': 'attachment; filename="%E0%A4%A.png"' } : {}) })
      .end(PNG),
  )
  ctx.hop = await redirector()
  ctx.secret = await localServer((_, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(PNG), '127.0.0.2')
  const media = httpMediaFetcher({ isAllowedAddress: address => address === '127.0.0.1', lookup: dns })
  ctx.g = await sendingGateway({ media })
  ctx.via = (target, status = 302) => `http://files.test:${ctx.hop.port}/r?status=${status}&to=${encodeURIComponent(target)}`
})
test.after(async ctx => {
  await ctx.g.stop()
  for (const server of [ctx.files, ctx.hop, ctx.secret]) await server.stop()
})

const REFUSED = 'URL do arquivo não permitida: use http(s) de um endereço público.'
const card = (image_url: string) => ({ image_url, title: 'Pizza', buttons: [{ type: 'quickReplyButton', displaytext: 'Quero', id: 'p' }] })

test('the seam works: an allowed address, a name resolving to it, and a redirect to it are fetched', async ({ g, files, via }) => {
  assertOk(await g.send({ to: FRIEND, file: `${files.url}/a.png` }))
  assertOk(await g.send({ to: FRIEND, file: `http://files.test:${files.port}/b.png` }))
  assertOk(await g.send({ to: FRIEND, file: via(`http://files.test:${files.port}/c.png`) }))
  assert.deepEqual(files.requests, ['/a.png', '/b.png', '/c.png'])
})

test('a name resolving to a private address is refused at connect time', async ({ g, secret, files }) => {
  assertError(await g.send({ to: FRIEND, file: `http://inside.test:${secret.port}/secret.png` }), 400, REFUSED)
  assertError(await g.send({ to: FRIEND, file: `http://metadata.test/latest/meta-data/` }), 400, REFUSED)
  assertError(await g.send({ to: FRIEND, file: `http://both.test:${files.port}/a.png` }), 400, REFUSED)
  assert.deepEqual(secret.requests, [])
})

test('a redirect to a private, metadata, internal or non-http target is refused, by 301, 302, 303, 307 or 308', async ({ g, secret, via }) => {
  const s = secret.port
  const targets = [
    `http://127.0.0.2:${s}/secret.png`,
    `http://2130706434:${s}/secret.png`,
    `http://0x7f000002:${s}/secret.png`,
    `http://0x7f.0.0.2:${s}/secret.png`,
    `http://017700000002:${s}/secret.png`,
    `http://127.0.0.2.:${s}/secret.png`,
    `//127.0.0.2:${s}/secret.png`,
    `http://files.test@127.0.0.2:${s}/secret.png`,
    `http://[::ffff:127.0.0.2]:${s}/secret.png`,
    `http://inside.test:${s}/secret.png`,
    `http://inside.test.:${s}/secret.png`,
    `http://localhost:${s}/secret.png`,
    'http://169.254.169.254/latest/meta-data/',
    'http://metadata.test/latest/meta-data/',
    'http://[fd00::1]/secret.png',
    'file:///etc/passwd',
    `gopher://127.0.0.2:${s}/_secret`,
  ]
  for (const target of targets) {
    for (const status of [301, 302, 303, 307, 308]) assertError(await g.send({ to: FRIEND, file: via(target, status) }), 400, REFUSED)
  }
  assert.deepEqual(secret.requests, [])
  assert.deepEqual(
    g.network.inbox(FRIEND).filter(e => e.type !== 'image'),
    [],
  )
})

test('a chain of redirects that ends inside is refused at the last hop', async ({ g, secret, via }) => {
  assertError(await g.send({ to: FRIEND, file: via(via(`http://127.0.0.2:${secret.port}/secret.png`)) }), 400, REFUSED)
  assert.deepEqual(secret.requests, [])
})

test('a redirect loop ends after maxRedirects (3) hops, as unreachable', async ({ g }) => {
  const loop = await localServer((_, res) => res.writeHead(302, { location: '/loop' }).end())
  try {
    assertError(await g.send({ to: FRIEND, file: `http://files.test:${loop.port}/loop` }), 400, 'Não foi possível baixar o arquivo da URL.')
    assert.equal(loop.requests.length, 4, 'the first request and 3 redirects')
  } finally {
    await loop.stop()
  }
})

test('DNS rebinding: a name answering a public address, then a private one, is refused on the connection that would use it', async ({ secret }) => {
  // The private server's port on the "public" address too, each answer closing its connection (no kept-alive socket hides a lookup).
  const files = await localServer((_, res) => res.writeHead(200, { 'content-type': 'image/png', connection: 'close' }).end(PNG), '127.0.0.1', secret.port)
  let lookups = 0
  const rebinding = ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    const address = lookups++ === 0 ? '127.0.0.1' : '127.0.0.2'
    process.nextTick(() => (options?.all ? callback(null, [{ address, family: 4 }]) : callback(null, address, 4)))
  }) as LookupFunction
  const media = httpMediaFetcher({ isAllowedAddress: address => address === '127.0.0.1', lookup: rebinding })
  const limits = { maxBytes: 1 << 20, timeoutMs: 2000 }
  try {
    assert.ok((await media.fetch(`http://rebind.test:${secret.port}/a.png`, limits)).data.equals(PNG))
    await assert.rejects(media.fetch(`http://rebind.test:${secret.port}/b.png`, limits), { reason: 'refused' })
    assert.equal(lookups, 2)
    assert.deepEqual([files.requests, secret.requests], [['/a.png'], []])
  } finally {
    await files.stop()
  }
})

test('a carousel card image redirected inside is refused the same way', async ({ g, secret, via }) => {
  assertError(await g.send({ to: FRIEND, message: 'Ofertas', cards: [card(via(`http://inside.test:${secret.port}/card.png`))] }), 400, REFUSED)
  assert.deepEqual(secret.requests, [])
})

test('a file server sending a malformed percent-encoded file name does not fail the download', async ({ g, files }) => {
  assertOk(await g.send({ to: FRIEND, file: `${files.url}/cd` }))
  assertOk(await g.send({ to: FRIEND, file: `${files.url}/%E0%A4%A.png` }))
  const names = g.network
    .inbox(FRIEND)
    .slice(-2)
    .map(e => (e as { fileName?: string }).fileName)
  assert.deepEqual(names, ['%E0%A4%A.png', '%E0%A4%A.png'])
})

test.run()
