import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { httpAgentResponder } from '../../adapters/agent-http/index.ts'
import { httpMediaFetcher } from '../../adapters/media-http/index.ts'
import { fakeDns } from '../helpers/hostile.ts'
import { FRIEND, assertError, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'

/**
 * The cloud providers' metadata and host services, each on every path that fetches a URL a caller
 * writes: the webhook URL of operations 3 and 4, a media `file`, the agent URL, and a public-looking
 * name that resolves to the address (checked at connect time by the default policy).
 */
const METADATA = {
  'Azure wireserver and metadata': '168.63.129.16',
  'Alibaba metadata (inside CGNAT 100.64/10)': '100.100.100.200',
  'AWS IMDS over IPv6 (inside ULA fc00::/7)': 'fd00:ec2::254',
  'Oracle metadata (inside IETF 192.0.0.0/24)': '192.0.0.192',
  'AWS, GCP, Azure IMDS (link-local)': '169.254.169.254',
}
const host = (address: string) => (address.includes(':') ? `[${address}]` : address)
const REFUSED_MEDIA = 'URL do arquivo não permitida: use http(s) de um endereço público.'

const test = suite<{ g: SendingGateway; named: SendingGateway }>('cloud metadata addresses are refused on every path that fetches')

const dns = fakeDns(Object.fromEntries(Object.values(METADATA).map((address, i) => [`meta${i}.example.com`, [address]])))

test.before(async ctx => {
  ctx.g = await sendingGateway()
  // The real media fetcher with its default policy; only DNS is faked, to name the addresses.
  ctx.named = await sendingGateway({ media: httpMediaFetcher({ lookup: dns }) })
})
test.after(async ctx => {
  await ctx.g.stop()
  await ctx.named.stop()
})

for (const [what, address] of Object.entries(METADATA)) {
  test(`${what} ${address}: refused as a webhook (3: 400, 4: 401), a media file (400) and an agent URL`, async ({ g }) => {
    const url = `http://${host(address)}/metadata/instance`
    assertError(await g.t.post('/api/v2/qrcode', { authkey: g.authkey, setAppkey: 'meta-3', webhook: url }), 400, 'Parâmetros inválidos.')
    assertError(await g.t.post('/api/developer', { authkey: g.authkey, message: 'meta-4', conecteQR: 'true', webhook: url }), 401, 'validation.required')
    assertError(await g.send({ to: FRIEND, file: url }), 400, REFUSED_MEDIA)
    assert.throws(() => httpAgentResponder({ url }), /agent URL refused \(private\)/)
  })
}

test('a public-looking name resolving to any of them is refused at connect time, by default', async ({ named }) => {
  const names = Object.values(METADATA).map((_, i) => `meta${i}.example.com`)
  for (const name of names) assertError(await named.send({ to: FRIEND, file: `http://${name}/metadata/instance` }), 400, REFUSED_MEDIA)
  assert.deepEqual([...new Set(dns.asked)], names, 'each name passed the URL check and was refused after DNS')
  assert.deepEqual(named.network.inbox(FRIEND), [])
})

test('GCP metadata.google.internal (and the bare name metadata) is refused by name, before any DNS', async ({ g }) => {
  for (const url of ['http://metadata.google.internal/computeMetadata/v1/', 'http://metadata/computeMetadata/v1/', 'http://METADATA.GOOGLE.INTERNAL./']) {
    assertError(await g.t.post('/api/v2/qrcode', { authkey: g.authkey, setAppkey: 'meta-3', webhook: url }), 400, 'Parâmetros inválidos.')
    assertError(await g.send({ to: FRIEND, file: url }), 400, REFUSED_MEDIA)
    assert.throws(() => httpAgentResponder({ url }), /agent URL refused \(private\)/)
  }
})

test.run()
