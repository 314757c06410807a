import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { suite } from 'uvu'
import { ForwardFailedError, forwardOperation } from '../../../src/http/forwarding/send.ts'
import { ForwardHeaders, signForward } from '../../../src/http/forwarding/signature.ts'
import { request, post, type Answer } from '../../helpers/http.ts'
import { FRIEND, inbox } from '../../helpers/messaging.ts'
import { HOLDER_ID, SECRET, deadUrl, startFakeHolder, startForwarder, withHolderAndForwarder, type ForwardingPair } from '../../helpers/forwarding.ts'

type Ctx = ForwardingPair
const test = suite<Ctx>('forwarding an operation to the instance holding its device')

withHolderAndForwarder(test)
test.before.each(({ holder }) => {
  holder.g.network.setFault(holder.g.deviceId, null)
  holder.marked.length = 0
})

const REFUSED = { status: 403, message: 'Requisição encaminhada recusada: assinatura inválida ou expirada.' }
const MOVING = { status: 503, message: 'O dispositivo está mudando de instância. Tente novamente em instantes.' }

/** POST `body` through the forwarding instance and, the same way, straight to the holder's gateway. */
async function both(ctx: Ctx, path: string, body: Record<string, unknown>): Promise<[Answer, Answer]> {
  const forwarded = await post(ctx.entry.url + path, body)
  const direct = await post(ctx.holder.url + path, body)
  return [forwarded, direct]
}

/** A request to `url` signed by hand: its headers, and a function sending them with a body (default the one signed). */
function signedRequest(url: string, body: string, options: { secret?: string; timestamp?: number; nonce?: string; to?: string } = {}) {
  const target = new URL(url)
  const timestamp = options.timestamp ?? Date.now()
  const nonce = options.nonce ?? randomBytes(8).toString('hex')
  const signature = signForward(options.secret ?? SECRET, {
    method: 'POST',
    path: target.pathname + target.search,
    timestamp,
    nonce,
    from: 'instance-x',
    to: options.to ?? HOLDER_ID,
    body,
  })
  const headers = {
    'content-type': 'application/json',
    [ForwardHeaders.forwardedBy]: 'instance-x',
    [ForwardHeaders.forwardedTo]: options.to ?? HOLDER_ID,
    [ForwardHeaders.timestamp]: String(timestamp),
    [ForwardHeaders.nonce]: nonce,
    [ForwardHeaders.signature]: signature,
  }
  return Object.assign((sentBody = body) => request(url, { method: 'POST', headers, body: sentBody }), { headers })
}

test('a forwarded send answers exactly what the holder answers: status, message and the id that reached the network', async ctx => {
  const { g } = ctx.holder
  const keys = { appkey: g.appkey, authkey: g.authkey }
  const before = inbox(g.network, FRIEND).length
  const answer = await post(`${ctx.entry.url}/api/create-message`, { ...keys, to: FRIEND, message: 'olá pelo outro' })
  assert.equal(answer.status, 200, answer.text)
  assert.deepEqual(Object.keys(answer.body).sort(), ['id', 'message', 'status'])
  assert.equal(answer.body.message, 'Mensagem de texto enviada.')
  const sent = inbox(g.network, FRIEND).slice(before)
  assert.equal(sent.length, 1, 'the message reached the network once')
  assert.equal(sent[0]!.id, answer.body.id)
  assert.equal(sent[0]!.text, 'olá pelo outro')
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/)
})

test('a forwarded refusal is the holder refusal, word for word', async ctx => {
  const { g } = ctx.holder
  const cases: [string, Record<string, unknown>][] = [
    ['/api/create-message', { appkey: 'no-such-appkey', authkey: g.authkey, to: FRIEND, message: 'x' }],
    ['/api/create-message', { appkey: g.appkey, authkey: g.authkey, to: FRIEND }],
    ['/api/developer', { authkey: g.authkey, message: 'loja', checkDispositivo: 'true' }],
    ['/api/developer', { authkey: 'wrong', message: 'loja', checkDispositivo: 'true' }],
  ]
  for (const [path, body] of cases) {
    const [forwarded, direct] = await both(ctx, path, body)
    assert.equal(forwarded.status, direct.status, `${path} ${JSON.stringify(body)}`)
    assert.deepEqual(forwarded.body, direct.body, `${path} ${JSON.stringify(body)}`)
  }
})

test('a refusal with Retry-After reaches the client with its Retry-After', async ctx => {
  const { g } = ctx.holder
  g.network.setFault(g.deviceId, 'rate-limit')
  const answer = await post(`${ctx.entry.url}/api/create-message`, { appkey: g.appkey, authkey: g.authkey, to: FRIEND, message: 'x' })
  assert.equal(answer.status, 429)
  assert.deepEqual(answer.body, { status: 429, message: 'Muitas requisições. Tente novamente mais tarde.' })
  assert.equal(answer.headers.get('retry-after'), '5')
})

test('the holder sees a forwarded request marked with the forwarding instance, the client IP and the URL it called', async ctx => {
  const { g } = ctx.holder
  await post(`${ctx.entry.url}/api/developer`, { authkey: g.authkey, message: 'loja', checkDispositivo: 'true' })
  await post(`${ctx.holder.url}/api/developer`, { authkey: g.authkey, message: 'loja', checkDispositivo: 'true' })
  assert.deepEqual(ctx.holder.marked, [
    { path: '/api/developer', forwardedBy: 'instance-entry', forwardedFrom: { instanceId: 'instance-entry', clientIp: '127.0.0.1', baseUrl: ctx.entry.url } },
    { path: '/api/developer', forwardedBy: undefined, forwardedFrom: undefined },
  ])
})

test('a request signed with another secret is refused 403 and runs nothing', async ctx => {
  const { g } = ctx.holder
  const sends = ctx.holder.transport.sent.length
  const answer = await forwardOperation({
    baseUrl: ctx.holder.url,
    path: '/api/create-message',
    fields: { appkey: g.appkey, authkey: g.authkey, to: FRIEND, message: 'x' },
    secret: 'not-the-cluster-secret',
    from: 'intruder',
    to: HOLDER_ID,
  })
  assert.equal(answer.status, 403)
  assert.deepEqual(answer.body, REFUSED)
  const entry = await startForwarder(ctx.holder.url, { secret: 'not-the-cluster-secret' })
  try {
    const relayed = await post(`${entry.url}/api/create-message`, { appkey: g.appkey, authkey: g.authkey, to: FRIEND, message: 'x' })
    assert.equal(relayed.status, 403)
    assert.deepEqual(relayed.body, REFUSED)
  } finally {
    await entry.stop()
  }
  assert.equal(ctx.holder.transport.sent.length, sends)
  assert.deepEqual(ctx.holder.marked, [], 'no refused request reached the routes')
})

test('a request with a stale timestamp (over 30 s either way) is refused 403; a fresh one signed alike passes', async ctx => {
  const { g } = ctx.holder
  const body = JSON.stringify({ authkey: g.authkey, message: 'loja', checkDispositivo: 'true' })
  for (const skew of [-31_000, 31_000]) {
    const answer = await signedRequest(`${ctx.holder.url}/api/developer`, body, { timestamp: Date.now() + skew })()
    assert.equal(answer.status, 403, `skew ${skew}`)
    assert.deepEqual(answer.body, REFUSED)
  }
  const fresh = await signedRequest(`${ctx.holder.url}/api/developer`, body, { timestamp: Date.now() - 20_000 })()
  assert.equal(fresh.status, 200, fresh.text)
})

test('a signed request replayed with a changed body, or replayed as it was, is refused 403', async ctx => {
  const { g } = ctx.holder
  const sends = ctx.holder.transport.sent.length
  const body = JSON.stringify({ appkey: g.appkey, authkey: g.authkey, to: FRIEND, message: 'uma vez' })
  const send = signedRequest(`${ctx.holder.url}/api/create-message`, body)
  const first = await send()
  assert.equal(first.status, 200, first.text)
  const changed = await send(body.replace('uma vez', 'duas vezes'))
  assert.equal(changed.status, 403)
  assert.deepEqual(changed.body, REFUSED)
  const again = await send()
  assert.equal(again.status, 403, 'the same signature twice')
  assert.deepEqual(again.body, REFUSED)
  assert.equal(ctx.holder.transport.sent.length, sends + 1, 'sent once')
})

test('a request signed for another instance (a copy played to the next holder of the device) is refused 403 and sends nothing', async ctx => {
  const { g } = ctx.holder
  const sends = ctx.holder.transport.sent.length
  const body = JSON.stringify({ appkey: g.appkey, authkey: g.authkey, to: FRIEND, message: 'para outra instância' })
  const answer = await signedRequest(`${ctx.holder.url}/api/create-message`, body, { to: 'instance-that-left' })()
  assert.equal(answer.status, 403)
  assert.deepEqual(answer.body, REFUSED)
  assert.equal(ctx.holder.transport.sent.length, sends)
})

test('a request claiming to be forwarded without a signature, or to another path than signed, is refused 403', async ctx => {
  const { g } = ctx.holder
  const body = JSON.stringify({ authkey: g.authkey, message: 'loja', checkDispositivo: 'true' })
  const bare = await request(`${ctx.holder.url}/api/developer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [ForwardHeaders.forwardedBy]: 'instance-x' },
    body,
  })
  assert.equal(bare.status, 403)
  assert.deepEqual(bare.body, REFUSED)
  const { headers } = signedRequest(`${ctx.holder.url}/api/v2/qrcode`, body)
  const elsewhere = await request(`${ctx.holder.url}/api/developer`, { method: 'POST', headers, body })
  assert.equal(elsewhere.status, 403)
  assert.deepEqual(elsewhere.body, REFUSED)
})

test('a holder that dies mid-request gives ForwardFailedError, and the client 503 with Retry-After, sent once', async () => {
  for (const behaviour of ['destroy-mid-body', 'destroy-after-body'] as const) {
    const dying = await startFakeHolder(behaviour)
    try {
      await assert.rejects(
        forwardOperation({
          baseUrl: dying.url,
          path: '/api/create-message',
          fields: { message: 'x'.repeat(200_000) },
          secret: SECRET,
          from: 'a',
          to: HOLDER_ID,
        }),
        (err: unknown) => err instanceof ForwardFailedError && err.reason === 'broken' && err.code === 'holder-unavailable' && err.cause !== undefined,
      )
      const entry = await startForwarder(dying.url)
      try {
        const answer = await post(`${entry.url}/api/create-message`, { appkey: 'k', authkey: 'a', to: FRIEND, message: 'x'.repeat(200_000) })
        assert.equal(answer.status, 503, `${behaviour}: ${answer.text}`)
        assert.deepEqual(answer.body, MOVING)
        assert.equal(answer.headers.get('retry-after'), '5')
      } finally {
        await entry.stop()
      }
      await new Promise(resolve => setTimeout(resolve, 200))
      assert.equal(dying.requests.length, 2, `${behaviour}: one request per forward, never resent`)
      assert.equal(dying.requests[1]!.url, '/api/create-message')
      assert.equal(dying.requests[1]!.headers[ForwardHeaders.forwardedBy], 'instance-entry')
    } finally {
      await dying.stop()
    }
  }
})

test('an unreachable holder, a holder that does not answer in time and a non-JSON answer are ForwardFailedError, never retried', async () => {
  const base = { path: '/api/create-message', fields: { message: 'x' }, secret: SECRET, from: 'a', to: HOLDER_ID }
  await assert.rejects(
    forwardOperation({ ...base, baseUrl: await deadUrl() }),
    (err: unknown) => err instanceof ForwardFailedError && err.reason === 'unreachable',
  )
  for (const [behaviour, reason] of [
    ['never-answer', 'timeout'],
    ['trickle', 'timeout'], // the limit is the whole forward's, not a pause's between two bytes of its answer
    ['html', 'bad-answer'],
  ] as const) {
    const holder = await startFakeHolder(behaviour)
    try {
      await assert.rejects(
        forwardOperation({ ...base, baseUrl: holder.url, timeoutMs: 300 }),
        (err: unknown) => err instanceof ForwardFailedError && err.reason === reason,
        behaviour,
      )
      await new Promise(resolve => setTimeout(resolve, 200))
      assert.equal(holder.requests.length, 1, behaviour)
    } finally {
      await holder.stop()
    }
  }
})

test.run()
