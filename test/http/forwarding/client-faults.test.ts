import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer as createHttpsServer } from 'node:https'
import { join } from 'node:path'
import { createClient, HOLDER_HEADER } from '../../../src/client.ts'
import { tempDir } from '../../helpers/standalone.ts'
import { json, serve } from '../../helpers/stub-server.ts'

/**
 * The typed client (zapgate/client) when a holder or the base misbehaves: a holder whose certificate
 * it does not trust, one that never answers, and the answers that tell it when to try again or to
 * forget a holder (docs/api.md, Routing client).
 */

const FRIEND = '5511988887777'
const send = (client: ReturnType<typeof createClient>, message: string) => client.call('sendText', { appkey: 'loja', to: FRIEND, message })

test('a holder hint over https with a certificate the client does not trust costs no failed call: each request goes to the base, the hint left a minute', async () => {
  const dir = tempDir('zapgate-client-tls-')
  const made = spawnSync('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    join(dir, 'key.pem'),
    '-out',
    join(dir, 'cert.pem'),
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
  ])
  assert.is(made.status, 0, `openssl made a self-signed certificate: ${made.stderr}`)
  let holderRequests = 0
  const holder = createHttpsServer(
    { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
    (_req, res) => (holderRequests++, res.end('{"status":200,"message":"ok"}')),
  )
  await new Promise<void>(resolve => holder.listen(0, '127.0.0.1', resolve))
  const holderUrl = `https://127.0.0.1:${(holder.address() as { port: number }).port}`
  const base = await serve(json(200, { status: 200, message: 'Mensagem de texto enviada.', id: '1' }, { [HOLDER_HEADER]: holderUrl }))
  try {
    const client = createClient({ baseUrl: base.url, authkey: 'k' })
    const answers = []
    for (const message of ['1', '2', '3', '4']) answers.push(await send(client, message)) // threw on every other call before
    assert.equal(
      answers.map(answer => [answer.ok, answer.url]),
      Array(4).fill([true, base.url]),
    )
    assert.equal(
      base.bodies.map(body => JSON.parse(body).message),
      ['1', '2', '3', '4'],
    )
    assert.is(holderRequests, 0)
  } finally {
    base.close()
    holder.closeAllConnections()
    holder.close()
  }
})

test('a request with no answer within timeoutMs is given up (rejects), and not sent again', async () => {
  const base = await serve(() => {}) // takes the request, never answers (a stopped process)
  try {
    const client = createClient({ baseUrl: base.url, authkey: 'k', timeoutMs: 300 })
    const started = Date.now()
    await send(client, 'oi').then(
      () => assert.unreachable('an answer came'),
      () => undefined,
    )
    assert.ok(Date.now() - started < 3_000, `gave up after ${Date.now() - started} ms (5 minutes before)`)
    assert.is(base.bodies.length, 1)
  } finally {
    base.close()
  }
})

test('a timeoutMs past what a timer holds (30 days, Infinity: "no time-out") waits for the answer; one that is no positive number is refused by createClient', async () => {
  const base = await serve((req, body, res) => setTimeout(() => json(200, { status: 200, message: 'ok' })(req, body, res), 100))
  try {
    const outcomes = []
    for (const timeoutMs of [30 * 86_400_000, Infinity]) {
      const client = createClient({ baseUrl: base.url, authkey: 'k', timeoutMs })
      outcomes.push(
        await send(client, 'oi').then(
          answer => [answer.ok, answer.url],
          (err: Error) => `${err.name}: ${err.message}`,
        ),
      )
    }
    assert.equal(outcomes, [
      [true, base.url],
      [true, base.url],
    ]) // before: the 30 days were 1 ms (TimeoutError, the text sent or not), Infinity a RangeError on every call
    assert.is(base.bodies.length, 2)
    for (const timeoutMs of [0, -1, NaN]) assert.throws(() => createClient({ baseUrl: base.url, timeoutMs }), /timeoutMs/, String(timeoutMs))
  } finally {
    base.close()
  }
})

test("an answer's Retry-After reaches the caller (429, 503), in seconds", async () => {
  const base = await serve(json(429, { status: 429, message: 'Muitas requisições. Tente novamente mais tarde.' }, { 'retry-after': '16' }))
  try {
    const answer = await send(createClient({ baseUrl: base.url, authkey: 'k' }), 'oi')
    assert.equal([answer.ok, answer.httpStatus, answer.ok ? undefined : answer.retryAfter], [false, 429, 16])
  } finally {
    base.close()
  }
})

test('a hint on a 401 or 404 is not followed: the device forgets its holder, the next request goes to the base', async () => {
  for (const status of [401, 404]) {
    const elsewhere = await serve(json(200, { status: 200, message: 'ok' }))
    const base = await serve(json(status, { status, message: 'no' }, { [HOLDER_HEADER]: elsewhere.url }))
    try {
      const client = createClient({ baseUrl: base.url, authkey: 'k' })
      await send(client, 'oi')
      assert.is(client.urlFor('loja'), base.url, `after a ${status}`)
      await send(client, 'de novo')
      assert.equal(elsewhere.bodies, [], 'nothing went to the host the refusal named')
    } finally {
      base.close()
      elsewhere.close()
    }
  }
})

test('a holder hint whose connection hangs past timeoutMs (an advertised address that drops packets) fails one call, not every other one: the hint is then left a minute', async () => {
  const toHolder: string[] = []
  const fetch = ((url: string, init: RequestInit) => {
    if (url.startsWith('https://10.0.0.7')) {
      // Never connects (no SYN answered): only the client's time-out ends it, before undici's own 10 s connect time-out.
      toHolder.push(String(init.body))
      return new Promise((_resolve, reject) => init.signal!.addEventListener('abort', () => reject(init.signal!.reason)))
    }
    const headers = { 'content-type': 'application/json', [HOLDER_HEADER]: 'https://10.0.0.7:3000' }
    return Promise.resolve(new Response(JSON.stringify({ status: 200, message: 'ok' }), { headers }))
  }) as typeof globalThis.fetch
  const client = createClient({ baseUrl: 'https://api.example.com', authkey: 'k', timeoutMs: 200, fetch })
  const outcomes = []
  const awake = setInterval(() => {}, 1_000) // AbortSignal.timeout's timer keeps no process alive (a socket would)
  for (const message of ['1', '2', '3', '4', '5', '6']) {
    outcomes.push(
      await send(client, message).then(
        answer => answer.url,
        (err: Error) => err.name,
      ),
    )
  }
  const base = 'https://api.example.com'
  clearInterval(awake)
  assert.equal(outcomes, [base, 'TimeoutError', base, base, base, base]) // before: base, TimeoutError, base, TimeoutError, ...
  assert.is(toHolder.length, 1, 'the call that timed out is not sent again, and no other went to that holder')
})

test("a holder that gave one device's call no answer is left a minute for the other devices it held too: their calls go to the base, none waits out timeoutMs there", async () => {
  const toHolder: string[] = []
  const fetch = ((url: string, init: RequestInit) => {
    if (url.startsWith('https://10.0.0.7')) {
      toHolder.push(JSON.parse(String(init.body)).appkey) // a host that went down: no SYN answered, only the time-out ends it
      return new Promise((_resolve, reject) => init.signal!.addEventListener('abort', () => reject(init.signal!.reason)))
    }
    const headers = { 'content-type': 'application/json', [HOLDER_HEADER]: 'https://10.0.0.7:3000' }
    return Promise.resolve(new Response(JSON.stringify({ status: 200, message: 'ok' }), { headers }))
  }) as typeof globalThis.fetch
  const client = createClient({ baseUrl: 'https://api.example.com', authkey: 'k', timeoutMs: 200, fetch })
  const call = (appkey: string) =>
    client.call('sendText', { appkey, to: FRIEND, message: 'oi' }).then(
      answer => answer.url,
      (err: Error) => err.name,
    )
  const awake = setInterval(() => {}, 1_000)
  const outcomes = []
  for (const appkey of ['a', 'b', 'c', 'a']) outcomes.push(await call(appkey)) // each learns the holder, then the holder goes down
  assert.is(client.urlFor('b'), 'https://api.example.com', "b's next request goes to the base")
  for (const appkey of ['b', 'c']) outcomes.push(await call(appkey))
  clearInterval(awake)
  const base = 'https://api.example.com'
  assert.equal(outcomes, [base, base, base, 'TimeoutError', base, base]) // before: base, base, base, TimeoutError, TimeoutError, TimeoutError
  assert.equal(toHolder, ['a'], 'only the first call went to the holder that was down')
})

test.run()
