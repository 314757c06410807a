import { Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import got, { Options } from 'got'
import { nativeRequestOptions, rememberOriginal, useNativeRequestOptions } from '../../adapters/webhook-http/native-options.ts'
import { startReceiver } from '../helpers/receiver.ts'

const test = suite('adapters/webhook-http: native request options without got\'s slow literal')

rememberOriginal(Options)
const agent = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) }
const lookup = () => {}

/** got's own result and ours, for the same Options. */
function both(url: string, options: Record<string, unknown>) {
  const theirs = new Options(url, options).createNativeRequestOptions() as Record<string, unknown>
  const ours = nativeRequestOptions.call(new Options(url, options)) as Record<string, unknown>
  return { theirs, ours }
}

const cases: Array<[string, string, Record<string, unknown>]> = [
  ['a plain http POST as the webhook sender makes it', 'http://example.com/hook', { method: 'POST', agent, body: '{}', headers: { 'webhook-id': 'msg_1' }, retry: { limit: 0 }, followRedirect: false, throwHttpErrors: false, timeout: { request: 15_000 } }],
  ['https with TLS settings, a lookup and a local address', 'https://example.com/hook', { method: 'POST', agent, dnsLookup: lookup, dnsLookupIpVersion: 4, localAddress: '127.0.0.1', https: { rejectUnauthorized: false, certificateAuthority: 'CA', certificate: 'CERT', key: 'KEY', passphrase: 'pw', serverName: 'other.example', ciphers: 'TLS_AES_128_GCM_SHA256', minVersion: 'TLSv1.2', alpnProtocols: ['http/1.1'] } }],
  ['cache options', 'http://example.com/x', { cacheOptions: { shared: false, cacheHeuristic: 0.5 } }],
  ['a unix socket URL', 'http://unix:/var/run/receiver.sock:/hook', { enableUnixSockets: true }],
]

for (const [name, url, options] of cases) {
  test(`the same keys and values as got's createNativeRequestOptions: ${name}`, () => {
    const { theirs, ours } = both(url, options)
    assert.equal(Object.keys(ours).sort(), Object.keys(theirs).sort())
    assert.equal(ours, theirs)
    for (const key of ['agent', 'lookup', 'checkServerIdentity']) assert.ok(ours[key] === theirs[key], `${key} is the same object`)
  })
}

test('the https agent is picked for https URLs and the http agent for http URLs', () => {
  assert.ok(both('https://example.com/', { agent }).ours.agent === agent.https)
  assert.ok(both('http://example.com/', { agent }).ours.agent === agent.http)
})

test('as a beforeRequest hook it replaces the method of that request only, and the request goes out', async () => {
  const receiver = await startReceiver()
  try {
    let seen: Options | undefined
    const client = got.extend({ hooks: { beforeRequest: [options => {
      useNativeRequestOptions(options)
      seen = options as unknown as Options
    }] } })
    const response = await client.post(receiver.url, { body: '{"a":1}', headers: { 'content-type': 'application/json' }, agent, retry: { limit: 0 } })
    assert.is(response.statusCode, 200)
    assert.is(receiver.hooks[0].body, '{"a":1}')
    assert.ok(seen && seen.createNativeRequestOptions === nativeRequestOptions)
    assert.ok(Options.prototype.createNativeRequestOptions !== nativeRequestOptions, 'got itself is not patched')
  } finally {
    await receiver.stop()
  }
})

test.after(() => {
  agent.http.destroy()
  agent.https.destroy()
})

test.run()
