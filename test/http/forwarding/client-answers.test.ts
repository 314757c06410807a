import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createClient, HOLDER_HEADER } from '../../../src/client.ts'
import { json, serve } from '../../helpers/stub-server.ts'

/**
 * The typed client (zapgate/client) against servers that answer what a gateway, a proxy in front
 * of it or a misconfigured host may answer: the caller's key and request go only where docs/api.md
 * (Routing client) says, and every answer resolves as one.
 */

const FRIEND = '5511988887777'

test('a redirect is an answer, not followed: the body with the caller key never goes to the host it names, nor twice', async () => {
  const elsewhere = await serve(json(200, { status: 200, message: 'Mensagem enviada.', id: '3EB0AAAA' }))
  const base = await serve((req, _body, res) => res.writeHead(307, { location: `${elsewhere.url}${req.url}` }).end())
  try {
    const client = createClient({ baseUrl: base.url, authkey: 'secret-key' })
    const answer = await client.call('sendText', { appkey: 'loja', to: FRIEND, message: 'oi' })
    assert.equal(elsewhere.bodies, [], 'nothing reached the host the redirect named')
    assert.equal([answer.ok, answer.httpStatus, answer.body.status, answer.url], [false, 307, 307, base.url])
    assert.is(base.bodies.length, 1)
  } finally {
    base.close()
    elsewhere.close()
  }
})

test("a JSON error that is not the gateway's (a proxy's 503 {message}) resolves with its HTTP status and forgets the holder", async () => {
  // The base URL names the holder, then the proxy in front of the holder answers 503.
  const holder = await serve(json(503, { message: 'Service Unavailable' }))
  const base = await serve(json(200, { status: 200, message: 'ok' }, { [HOLDER_HEADER]: holder.url }))
  const nothing = await serve(json(502, null))
  try {
    const client = createClient({ baseUrl: base.url, authkey: 'k' })
    assert.ok((await client.call('sendText', { appkey: 'loja', to: FRIEND, message: 'um' })).ok)
    assert.is(client.urlFor('loja'), holder.url)
    const failed = await client.call('sendText', { appkey: 'loja', to: FRIEND, message: 'dois' })
    assert.equal([failed.ok, failed.httpStatus, failed.body.status, typeof failed.body.message], [false, 503, 503, 'string'])
    assert.is(client.urlFor('loja'), base.url, 'the holder is forgotten after its 503')
    // JSON that is no object at all is an answer too, not a TypeError.
    const odd = await createClient({ baseUrl: nothing.url, authkey: 'k' }).call('sendText', { appkey: 'loja', to: FRIEND, message: 'x' })
    assert.equal([odd.ok, odd.httpStatus, odd.body.status], [false, 502, 502])
  } finally {
    for (const server of [holder, base, nothing]) server.close()
  }
})

test("the client's key goes in a body whose authkey is left undefined", async () => {
  const sent: unknown[] = []
  const fetch = (async (_url: string, init: RequestInit) => {
    sent.push(JSON.parse(String(init.body)))
    return new Response(JSON.stringify({ status: 200, message: 'ok' }), { headers: { 'content-type': 'application/json' } })
  }) as typeof globalThis.fetch
  const client = createClient({ baseUrl: 'https://api.example.com', authkey: 'client-key', fetch })
  const perRequest: string | undefined = undefined
  await client.call('sendText', { appkey: 'loja', to: FRIEND, message: 'oi', authkey: perRequest })
  assert.equal(sent, [{ authkey: 'client-key', appkey: 'loja', to: FRIEND, message: 'oi' }])
})

test('a plain http:// hint is ignored whatever the case of the https base URL, so the key never leaves TLS', async () => {
  const urls: string[] = []
  const fetch = (async (url: string) => {
    urls.push(url)
    return new Response(JSON.stringify({ status: 200, message: 'ok' }), {
      headers: { 'content-type': 'application/json', [HOLDER_HEADER]: 'http://10.0.0.7:8080' },
    })
  }) as typeof globalThis.fetch
  const client = createClient({ baseUrl: 'HTTPS://api.example.com', authkey: 'k', fetch })
  await client.call('sendText', { appkey: 'loja', to: FRIEND, message: 'um' })
  await client.call('sendText', { appkey: 'loja', to: FRIEND, message: 'dois' })
  assert.equal(urls, ['HTTPS://api.example.com/api/create-message', 'HTTPS://api.example.com/api/create-message'])
})

test('a holder hint the client cannot connect to (a name that does not resolve) costs no failed call: the request goes to the base URL, and the hint is not followed again at once', async () => {
  const base = await serve(json(200, { status: 200, message: 'ok' }, { [HOLDER_HEADER]: 'http://holder-1.invalid:3000' }))
  try {
    const client = createClient({ baseUrl: base.url, authkey: 'k' })
    const answers = []
    for (const message of ['um', 'dois', 'três']) answers.push(await client.call('sendText', { appkey: 'loja', to: FRIEND, message }))
    assert.equal(
      answers.map(answer => [answer.ok, answer.url]),
      [
        [true, base.url],
        [true, base.url],
        [true, base.url],
      ],
    )
    assert.equal(
      base.bodies.map(body => JSON.parse(body).message),
      ['um', 'dois', 'três'],
    )
    assert.is(client.urlFor('loja'), base.url, 'the unreachable hint is not remembered again')
  } finally {
    base.close()
  }
})

test("a holder hint on a port fetch refuses to call (6000, 5060, 10080: the fetch standard's bad ports, which the instances' own forwards reach) is not followed: every call answers, from the base URL", async () => {
  const base = await serve(json(200, { status: 200, message: 'ok' }, { [HOLDER_HEADER]: 'http://127.0.0.1:6000' }))
  try {
    const client = createClient({ baseUrl: base.url, authkey: 'k' })
    const answers = []
    for (const message of ['um', 'dois', 'três']) {
      const answer = await client
        .call('sendText', { appkey: 'loja', to: FRIEND, message })
        .catch((err: Error) => `${err.message}: ${(err.cause as Error)?.message}`)
      answers.push(typeof answer === 'string' ? answer : [answer.ok, answer.url])
    }
    assert.equal(answers, Array(3).fill([true, base.url]))
    assert.is(base.bodies.length, 3)
    assert.is(client.urlFor('loja'), base.url)
  } finally {
    base.close()
  }
})

test('a holder hint that is no usable URL (credentials, a query or fragment, two joined, not parseable, not http) is ignored: every call answers, each from the base URL', async () => {
  // The hints name the base's own host, so a request the client did send to one shows in its answer's url (and its path).
  const odd = (host: string) => [
    '',
    'holder-1',
    'javascript:alert(1)',
    `http://user:pass@${host}`,
    `http://${host}/?to=x`,
    `http://${host}/#x`,
    `http://${host}, http://${host}`,
    'http://exa mple.com',
  ]
  for (const hint of odd('127.0.0.1:0')) {
    let base: Awaited<ReturnType<typeof serve>> | undefined
    base = await serve((req, body, res) =>
      json(200, { status: 200, message: 'ok', path: req.url }, { [HOLDER_HEADER]: hint.replace('127.0.0.1:0', new URL(base!.url).host) })(req, body, res),
    )
    try {
      const client = createClient({ baseUrl: base.url, authkey: 'k' })
      const answers = []
      for (const message of ['um', 'dois']) {
        const answer = await client.call('sendText', { appkey: 'loja', to: FRIEND, message }).catch(err => String(err))
        answers.push(typeof answer === 'string' ? answer : [answer.ok, answer.url, (answer.body as { path?: string }).path])
      }
      const direct = [true, base.url, '/api/create-message']
      assert.equal(answers, [direct, direct], `hint ${JSON.stringify(hint)}`)
    } finally {
      base.close()
    }
  }
})

test('the client remembers a bounded number of holders: a client of many devices (or one whose devices come and go) forgets the least recently used first', async () => {
  const fetch = (async (url: string, init: RequestInit) => {
    const { appkey } = JSON.parse(String(init.body)) as { appkey: string }
    if (!url.startsWith('https://api.example.com/')) throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } })
    const hint = appkey.startsWith('gone-') ? `https://${appkey}.example.com` : 'https://holder-1.example.com'
    return new Response(JSON.stringify({ status: 200, message: 'ok' }), { headers: { 'content-type': 'application/json', [HOLDER_HEADER]: hint } })
  }) as typeof globalThis.fetch
  const client = createClient({ baseUrl: 'https://api.example.com', authkey: 'k', fetch })
  const sendFor = (appkey: string) => client.call('sendText', { appkey, to: FRIEND, message: 'oi' })
  await sendFor('first')
  for (let i = 0; i < 20_000; i++) await sendFor(`device-${i}`)
  assert.is(client.urlFor('device-19999'), 'https://holder-1.example.com', 'the last device is remembered')
  assert.is(client.urlFor('first'), 'https://api.example.com', 'the first one, not used since, is forgotten')
  // Holder URLs it could not connect to are kept off a minute each, also within a bound: 20 000 instances come and go.
  for (let i = 0; i < 20_000; i++) {
    await sendFor(`gone-${i}`) // names the holder
    await sendFor(`gone-${i}`) // refused there: to the base URL, the holder kept off
  }
  await sendFor('gone-0')
  assert.is(client.urlFor('gone-0'), 'https://gone-0.example.com', 'the oldest unreachable holder is no longer kept off')
})

test.run()
