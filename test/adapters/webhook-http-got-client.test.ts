import http, { Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import got, { type Got, type RequestFunction } from 'got'
import { SHARED_OPTIONS, webhookClient } from '../../adapters/webhook-http/got-client.ts'
import { startReceiver } from '../helpers/receiver.ts'

const test = suite("adapters/webhook-http: the sender's got client against plain got")

const agent = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) }
/** The four keys of got's default `cacheOptions`, which the sender's hook leaves out. */
const CACHE_KEYS = ['cacheHeuristic', 'ignoreCargoCult', 'immutableMinTimeToLive', 'shared']

/** The native request options each request was made with, recorded by got's public `request` option. */
function recording(client: Got, connect: boolean) {
  const seen: Array<Record<string, unknown>> = []
  const request: RequestFunction = (url, options, callback) => {
    seen.push(options as Record<string, unknown>)
    if (!connect) throw new Error('recorded, not sent')
    return http.request(url, options, callback)
  }
  return { client: client.extend({ request }), seen }
}

/** The sender's client and plain got with the same shared settings, each recording its requests. */
function bothClients(connect: boolean) {
  return { ours: recording(webhookClient(got, agent), connect), plain: recording(got.extend({ ...SHARED_OPTIONS, agent }), connect) }
}

/** Ours equals plain got's, except that it lacks the four undefined cache keys. */
function assertSameNativeOptions(ours: Record<string, unknown>, plain: Record<string, unknown>) {
  const onlyPlain = Object.keys(plain)
    .filter(key => !(key in ours))
    .sort()
  assert.equal(onlyPlain, CACHE_KEYS)
  for (const key of CACHE_KEYS) assert.is(plain[key], undefined, `plain got's ${key}`)
  assert.equal(
    Object.keys(ours).filter(key => !(key in plain)),
    [],
    'no key of its own',
  )
  for (const key of Object.keys(ours)) {
    if (key === 'headers') assert.equal(ours.headers, plain.headers)
    else assert.ok(ours[key] === plain[key], `${key}: ${String(ours[key])} vs ${String(plain[key])}`)
  }
}

test('an http POST: the same native options as plain got, and the same request reaches the receiver', async () => {
  const receiver = await startReceiver()
  try {
    const { ours, plain } = bothClients(true)
    const options = { body: '{"event":"Texto","é":1}', headers: { 'webhook-id': 'msg_1', 'webhook-signature': 'v1,x' }, timeout: { request: 5_000 } }
    const answers = [await ours.client.post(receiver.url, options), await plain.client.post(receiver.url, options)]
    assert.equal(
      answers.map(answer => answer.statusCode),
      [200, 200],
    )
    assertSameNativeOptions(ours.seen[0], plain.seen[0])
    assert.ok(ours.seen[0].agent === agent.http, 'the keep-alive http agent')
    const [mine, theirs] = receiver.hooks
    assert.is(mine.body, '{"event":"Texto","é":1}')
    assert.is(mine.body, theirs.body)
    const sent = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'connection'))
    assert.equal(sent(mine.headers), sent(theirs.headers))
    assert.is(mine.headers['user-agent'], 'zapgate-webhooks/1')
  } finally {
    await receiver.stop()
  }
})

test('an https POST (not sent): the same native options as plain got, with the https agent and TLS defaults', async () => {
  const { ours, plain } = bothClients(false)
  for (const client of [ours.client, plain.client]) {
    await client.post('https://receiver.example/hook', { body: '{}', headers: { 'webhook-id': 'msg_2' } }).then(
      () => assert.unreachable('the recording request function refuses to send'),
      error => assert.match((error as Error).message, /recorded, not sent/),
    )
  }
  assertSameNativeOptions(ours.seen[0], plain.seen[0])
  assert.ok(ours.seen[0].agent === agent.https, 'the https agent')
  assert.is(typeof ours.seen[0].checkServerIdentity, 'function')
})

test('the client never caches, the one case where cacheOptions would matter', () => {
  const client = webhookClient(got, agent)
  assert.is(client.defaults.options.cache, undefined)
})

test.after(() => {
  agent.http.destroy()
  agent.https.destroy()
})

test.run()
