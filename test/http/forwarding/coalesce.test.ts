import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport } from '../../../adapters/transport-memory/index.ts'
import { inProcessCluster, linkedDeviceInCluster, type ClusterMember } from '../../helpers/cluster-in-process.ts'
import { post, request as send } from '../../helpers/http.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { startFakeHolder } from '../../helpers/forwarding.ts'
import { coalescedForwards, BATCH_PATH } from '../../../src/http/forwarding/coalesce.ts'
import { ForwardFailedError } from '../../../src/http/forwarding/send.ts'
import { signedHeaders } from '../../../src/http/forwarding/signature.ts'

const FRIEND = '5511988887777'
const DEVICE_PHONE = '5511944443333'

/** A cluster of two with a device linked; the requests each member answered, by route. */
async function clusterWithDevice(email: string) {
  const network = new MemoryNetwork()
  const members = await inProcessCluster(2, () => ({ transport: memoryTransport({ network }) }))
  const routes = new Map<ClusterMember, string[]>(members.map(member => [member, []]))
  for (const member of members) member.gateway.events.on('request', event => routes.get(member)!.push(event.route))
  const linked = await linkedDeviceInCluster(members, network, email, DEVICE_PHONE)
  return { network, members, routes, ...linked }
}

/** Send bursts of `bodies` (JSON text as given, or an object) at once to `url` until one burst reached the holder as a batch (requests read in one turn coalesce); that burst's answers. */
async function burstUntilBatched(url: string, bodies: (Record<string, unknown> | string)[], holderRoutes: string[]) {
  const postOne = (body: Record<string, unknown> | string) =>
    typeof body === 'string'
      ? send(`${url}/api/create-message`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
      : post(`${url}/api/create-message`, body)
  for (let attempt = 0; attempt < 20; attempt++) {
    const batchesBefore = holderRoutes.filter(route => route === BATCH_PATH).length
    const answers = await Promise.all(bodies.map(postOne))
    if (holderRoutes.filter(route => route === BATCH_PATH).length > batchesBefore) return answers
  }
  throw new Error('no burst was ever sent as a batch')
}

test('forwards to one holder read in one turn travel as one batch, each answered as its own request', async () => {
  const { network, members, routes, authkey, holder, other } = await clusterWithDevice('batch@example.com')
  try {
    const forwards: { ok: boolean }[] = []
    other.gateway.events.on('forward', event => forwards.push(event))
    const texts = ['um', 'dois', 'três', 'quatro']
    const answers = await burstUntilBatched(
      other.url,
      texts.map(message => ({ authkey, appkey: 'loja', to: FRIEND, message })),
      routes.get(holder)!,
    )
    for (const answer of answers) {
      assert.is(answer.status, 200, answer.text)
      assert.is(answer.body.message, 'Mensagem de texto enviada.')
      assert.is(answer.headers.get('x-zapgate-holder'), holder.url, 'the holder hint is relayed')
      assert.is(answer.headers.get('x-zapgate-not-holder'), null)
    }
    assert.is(new Set(answers.map(answer => answer.body.id)).size, texts.length, 'each client its own message id')
    const sent = network.inbox(FRIEND).map(entry => ('text' in entry ? { id: entry.id, text: entry.text } : undefined))
    for (const [i, answer] of answers.entries())
      assert.ok(
        sent.some(entry => entry?.id === answer.body.id && entry?.text === texts[i]),
        `${texts[i]} went out under its id`,
      )
    assert.ok(forwards.every(forward => forward.ok))
    // The holder counts each forwarded operation as a request of its route, besides the batch.
    assert.is(routes.get(holder)!.filter(route => route === '/api/create-message').length, sent.length)
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test('a body sent with a byte order mark, in a batch with others, is answered as alone and spoils none of the others', async () => {
  const { network, members, routes, authkey, holder, other } = await clusterWithDevice('bom@example.com')
  try {
    const texts = ['um', 'dois', 'com marca', 'quatro']
    const bodies = texts.map(message => JSON.stringify({ authkey, appkey: 'loja', to: FRIEND, message }))
    bodies[2] = `\uFEFF${bodies[2]}` // the first of a burst goes alone: this one in the batch after it
    const answers = await burstUntilBatched(other.url, bodies, routes.get(holder)!)
    for (const answer of answers) assert.is(answer.status, 200, answer.text)
    for (const [i, answer] of answers.entries())
      assert.ok(
        network.inbox(FRIEND).some(entry => entry.id === answer.body.id && 'text' in entry && entry.text === texts[i]),
        `${texts[i]} went out`,
      )
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test('a batch answers each forward as soon as it is done: a send that hangs holds none of the others; each is checked on its own', async () => {
  const { network, members, routes, authkey, holder, other } = await clusterWithDevice('slow@example.com')
  try {
    await post(`${other.url}/api/create-message`, { authkey, appkey: 'loja', to: FRIEND, message: 'warm' }) // the holder is known
    const invalid = { authkey, appkey: 'loja', to: FRIEND, message: '' }
    const direct = await post(`${holder.url}/api/create-message`, invalid)
    assert.ok(direct.body.status >= 400)
    const batches = () => routes.get(holder)!.filter(route => route === BATCH_PATH).length // counted as each batch ends
    let batchedWhileHanging = false
    for (let attempt = 0; attempt < 20 && !batchedWhileHanging; attempt++) {
      network.setFault(DEVICE_PHONE, 'hang')
      const slow = post(`${other.url}/api/create-message`, { authkey, appkey: 'loja', to: FRIEND, message: 'devagar' })
      const [status, refused] = await Promise.all([
        post(`${other.url}/api/developer`, { authkey, message: 'loja', checkDispositivo: 'true' }),
        post(`${other.url}/api/create-message`, invalid),
      ])
      assert.is(status.status, 200, status.text)
      assert.is(status.body.dispositivo.conectado, true)
      assert.equal([refused.status, refused.body], [direct.status, direct.body], 'a bad input in the batch is answered as a direct one is')
      const early = await Promise.race([slow.then(() => 'answered'), new Promise(resolve => setTimeout(resolve, 100, 'waiting'))])
      assert.is(early, 'waiting', 'the hanging send is still under way')
      const before = batches()
      network.setFault(DEVICE_PHONE, null)
      assert.is((await slow).status, 200)
      // A batch that ended only now held the hanging send and (a batch being two or more) another of this burst, answered above.
      batchedWhileHanging = await waitFor(async () => batches() > before, 500).then(
        () => true,
        () => false,
      )
    }
    assert.ok(batchedWhileHanging, 'a burst went as a batch with the hanging send in it')
  } finally {
    network.setFault(DEVICE_PHONE, null)
    for (const member of members) await member.stop().catch(() => {})
  }
})

test('the batch path answers 403 forward-refused to a request no instance signed, or signed for another path', async () => {
  const { members, holder } = await clusterWithDevice('refused@example.com')
  try {
    const body = { items: [{ path: '/api/create-message', body: { authkey: 'x', appkey: 'loja', to: FRIEND, message: 'oi' } }] }
    const unsigned = await post(`${holder.url}${BATCH_PATH}`, body)
    assert.is(unsigned.status, 403)
    assert.is(unsigned.body.message, 'Requisição encaminhada recusada: assinatura inválida ou expirada.')
    const text = JSON.stringify(body)
    const headers = signedHeaders('a cluster secret of enough length', {
      // inProcessCluster's
      method: 'POST',
      path: '/api/create-message',
      timestamp: Date.now(),
      nonce: 'n1',
      from: 'someone',
      to: holder.id,
      body: text,
    })
    const elsewhere = await fetch(`${holder.url}${BATCH_PATH}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: text })
    assert.is(elsewhere.status, 403)
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

/** POST a batch of `items` to `holder` as the instance `from` signs it; the answer lines by index, and the HTTP status. */
async function postBatch(holder: ClusterMember, from: ClusterMember, items: unknown[]) {
  const text = JSON.stringify({ items })
  const headers = signedHeaders('a cluster secret of enough length', {
    method: 'POST',
    path: BATCH_PATH,
    timestamp: Date.now(),
    nonce: `n${Math.random()}`,
    from: from.id,
    to: holder.id,
    body: text,
  })
  const answer = await fetch(`${holder.url}${BATCH_PATH}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: text })
  const lines = (await answer.text())
    .split('\n')
    .filter(Boolean)
    .map(line => JSON.parse(line) as { i: number; status: number; body: any })
  return { status: answer.status, type: answer.headers.get('content-type'), byIndex: new Map(lines.map(line => [line.i, line])) }
}

test('each forward of a batch is read and checked as its own request: one not an object, one for no operation path, one sent', async () => {
  const { network, members, authkey, holder, other } = await clusterWithDevice('items@example.com')
  try {
    const notObject = await fetch(`${holder.url}/api/create-message`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[1]' })
    const notObjectAnswer = await notObject.json()
    const answer = await postBatch(holder, other, [
      { path: '/api/create-message', body: [1] },
      { path: '/api/nothing-here', body: { authkey } },
      { path: '/api/create-message', clientIp: '203.0.113.9', body: { authkey, appkey: 'loja', to: FRIEND, message: 'em lote' } },
    ])
    assert.is(answer.status, 200)
    assert.is(answer.type, 'application/x-ndjson')
    assert.equal(answer.byIndex.get(0)!.body, notObjectAnswer, 'as a direct request whose body is no object')
    assert.is(answer.byIndex.get(1)!.status, 403)
    assert.is(answer.byIndex.get(2)!.status, 200)
    const sent = network.inbox(FRIEND).find(entry => entry.id === answer.byIndex.get(2)!.body.id)
    assert.is(sent && 'text' in sent ? sent.text : undefined, 'em lote')
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test('a forward of a batch under way when its holder shuts down is answered, not cut off', async () => {
  const { network, members, authkey, holder, other } = await clusterWithDevice('drain@example.com')
  try {
    network.setFault(DEVICE_PHONE, 'hang')
    const batch = postBatch(holder, other, [{ path: '/api/create-message', body: { authkey, appkey: 'loja', to: FRIEND, message: 'antes de parar' } }])
    await new Promise(resolve => setTimeout(resolve, 150)) // the send is hanging on the network
    let closed = false
    const closing = holder.gateway.close().then(() => (closed = true))
    await new Promise(resolve => setTimeout(resolve, 150))
    assert.is(closed, false, 'the shutdown waits for the batch')
    network.setFault(DEVICE_PHONE, null)
    const answer = await batch
    assert.is(answer.byIndex.get(0)!.status, 200, 'answered, not cut off by the shutdown')
    await closing
    assert.ok(network.inbox(FRIEND).some(entry => 'text' in entry && entry.text === 'antes de parar'))
  } finally {
    network.setFault(DEVICE_PHONE, null)
    for (const member of members) await member.stop().catch(() => {})
  }
})

/** A forward of a text to the holder at `url`, as to-holder.ts makes it. */
function forwardTo(url: string, message: string) {
  return {
    baseUrl: url,
    path: '/api/create-message',
    fields: { message },
    uploads: new Map(),
    raw: Buffer.from(JSON.stringify({ message })),
    secret: 's',
    from: 'a',
    to: 'b',
  }
}

test('a lone forward goes at once as a plain forward; those after it, while it is on its way, go together in one batch', async () => {
  const fake = await startFakeHolder('never-answer')
  try {
    const forward = coalescedForwards()
    const request = (message: string) => forwardTo(fake.url, message)
    const first = forward(request('um'))
    await waitFor(async () => fake.requests.length === 1)
    const later = [forward(request('dois')), forward(request('três'))]
    await waitFor(async () => fake.requests.length === 2)
    await new Promise(resolve => setTimeout(resolve, 50))
    assert.equal(
      fake.requests.map(request => request.url),
      ['/api/create-message', BATCH_PATH],
      'the first alone, the two after it in one batch',
    )
    await fake.stop()
    for (const outcome of await Promise.allSettled([first, ...later])) assert.is(outcome.status, 'rejected')
  } finally {
    await fake.stop()
  }
})

test('a batch carries at most 64 KiB of bodies: the forwards past it go in the next send', async () => {
  const fake = await startFakeHolder('never-answer')
  try {
    const forward = coalescedForwards()
    const request = forwardTo(fake.url, 'x'.repeat(30 * 1024))
    const sent = [forward(request), forward(request), forward(request)]
    await waitFor(async () => fake.requests.length === 2)
    assert.equal(
      fake.requests.map(request => request.url),
      [BATCH_PATH, '/api/create-message'],
      'two bodies of 30 KiB together, the third alone',
    )
    await fake.stop()
    for (const outcome of await Promise.allSettled(sent)) assert.is(outcome.status, 'rejected')
  } finally {
    await fake.stop()
  }
})

test('a batch broken off fails each forward not yet answered as broken (never retried), and an answer that is no JSON as bad-answer', async () => {
  for (const [behaviour, reason] of [
    ['destroy-mid-body', 'broken'],
    ['html', 'bad-answer'],
  ] as const) {
    const fake = await startFakeHolder(behaviour)
    try {
      const forward = coalescedForwards()
      const request = (message: string) => forwardTo(fake.url, message)
      const outcomes = await Promise.allSettled([forward(request('um')), forward(request('dois'))])
      for (const outcome of outcomes) {
        assert.is(outcome.status, 'rejected')
        const err = (outcome as PromiseRejectedResult).reason
        assert.instance(err, ForwardFailedError)
        assert.is(err.reason, reason, behaviour)
      }
      await waitFor(async () => fake.requests.length === 1)
      assert.is(fake.requests[0]!.url, BATCH_PATH, 'both went in one request')
    } finally {
      await fake.stop()
    }
  }
})

test.run()
