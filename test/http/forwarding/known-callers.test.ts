import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport } from '../../../adapters/transport-memory/index.ts'
import type { Storage } from '../../../src/ports/storage.ts'
import { inProcessCluster, linkedDeviceInCluster, type ClusterMember } from '../../helpers/cluster-in-process.ts'
import { post } from '../../helpers/http.ts'

const FRIEND = '5511988887777'

/** `storage` with every read of an authkey, account or device record counted in `reads`. */
function countingAuthReads(storage: Storage, reads: { count: number }): Storage {
  return new Proxy(storage, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (name !== 'get') return typeof value === 'function' ? value.bind(target) : value
      return (key: string) => {
        if (/^(authkey|account|device):/.test(key)) reads.count++
        return target.get(key)
      }
    },
  })
}

/** A cluster of two whose record caches are off (every authentication reads the store), its device linked; the forwarding instance's auth reads and forwards counted. */
async function clusterWithCountedAuth(email: string) {
  const network = new MemoryNetwork()
  const reads = [{ count: 0 }, { count: 0 }]
  const members = await inProcessCluster(2, (index, storage) => ({
    transport: memoryTransport({ network }),
    storage: countingAuthReads(storage, reads[index]!),
    cacheTtlMs: 0,
  }))
  const linked = await linkedDeviceInCluster(members, network, email)
  const forwards: { operation?: string }[] = []
  linked.other.gateway.events.on('forward', event => forwards.push(event))
  return { network, members, ...linked, otherReads: reads[members.indexOf(linked.other)]!, forwards }
}

/** Status, body and holder hint of an answer: what a client can tell apart. */
async function answerOf(member: ClusterMember, path: string, body: Record<string, unknown>) {
  const answer = await post(`${member.url}${path}`, body)
  return { status: answer.status, body: answer.body, hint: answer.headers.get('x-zapgate-holder') }
}

test('a caller whose request a forward took to the holder before is forwarded at once: no authentication read on the forwarding instance', async () => {
  const { network, members, authkey, holder, other, otherReads, forwards } = await clusterWithCountedAuth('callers@example.com')
  try {
    const send = (text: string) => answerOf(other, '/api/create-message', { authkey, appkey: 'loja', to: FRIEND, message: text })
    const first = await send('um')
    assert.equal([first.status, first.hint], [200, holder.url])
    const afterFirst = otherReads.count
    assert.ok(afterFirst >= 2, 'the first request was authenticated on the forwarding instance (the store read, no cache)')
    for (const text of ['dois', 'três', 'quatro']) {
      const answer = await send(text)
      assert.equal([answer.status, answer.body.message, answer.hint], [200, first.body.message, holder.url])
    }
    assert.is(otherReads.count, afterFirst, 'no authkey, account or device read for the later requests')
    assert.equal(
      forwards.map(f => f.operation),
      ['sendText', 'sendText', 'sendText', 'sendText'],
    )
    assert.equal(
      network.inbox(FRIEND).map(entry => ('text' in entry ? entry.text : entry.type)),
      ['um', 'dois', 'três', 'quatro'],
    )
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test("a remembered caller's bad request is answered by the holder as a direct one is, and a stranger's or unknown device's request is never forwarded", async () => {
  const { members, authkey, holder, other, forwards } = await clusterWithCountedAuth('callers-errors@example.com')
  try {
    const badInputs: Record<string, unknown>[] = [
      { authkey, appkey: 'loja', to: FRIEND }, // no message
      { authkey, appkey: 'loja', to: 'not a number', message: 'oi' },
      { authkey, appkey: 'loja', to: '', message: 'oi' },
    ]
    // Before the caller is remembered: the forwarding instance answers these itself.
    const before = await Promise.all(badInputs.map(body => answerOf(other, '/api/create-message', body)))
    assert.is(forwards.length, 0)
    for (const [index, body] of badInputs.entries()) {
      const sent = forwards.length
      assert.is((await answerOf(other, '/api/create-message', { authkey, appkey: 'loja', to: FRIEND, message: 'ok' })).status, 200)
      const direct = await answerOf(holder, '/api/create-message', body)
      const remembered = await answerOf(other, '/api/create-message', body)
      assert.is(forwards.length, sent + 2, 'forwarded unchecked, for the holder to refuse')
      assert.equal(remembered, direct, `same answer forwarded at once as at the holder: ${JSON.stringify(body)}`)
      assert.equal(remembered, before[index], 'and as before the caller was remembered')
      assert.is(remembered.hint, null)
    }

    const stranger = await post(`${other.url}/api/auth`, {
      auth: 'registrar',
      nome: 'Stranger',
      email: 'stranger-callers@example.com',
      senha: 'senha-secreta',
      telefone: '+55 11 99999-0001',
      plano: '1',
    })
    const refused: [Record<string, unknown>, number, string][] = [
      [{ authkey: 'not-a-key-of-anyone', appkey: 'loja', to: FRIEND, message: 'oi' }, 401, 'validation.required'],
      [{ authkey, appkey: 'no-such-device', to: FRIEND, message: 'oi' }, 404, 'Nenhum dispositivo encontrado.'],
      [{ authkey: stranger.body.data.authkey, appkey: 'loja', to: FRIEND, message: 'oi' }, 404, 'Nenhum dispositivo encontrado.'],
    ]
    const forwardsBefore = forwards.length
    for (const [body, status, message] of refused) {
      const answer = await answerOf(other, '/api/create-message', body)
      assert.equal([answer.status, answer.body.message, answer.hint], [status, message, null], JSON.stringify(body))
      assert.equal(answer, await answerOf(holder, '/api/create-message', body))
    }
    assert.is(forwards.length, forwardsBefore, 'an unknown key, device or another account is answered where it was sent')
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test("a remembered caller's key refused by the holder counts as a failed attempt on the forwarding instance, as a direct one would", async () => {
  const network = new MemoryNetwork()
  const members = await inProcessCluster(2, () => ({
    transport: memoryTransport({ network }),
    rateLimit: { perAccount: false, authFailures: { points: 1, duration: 900 }, authFailuresPerIp: false, registrations: false },
  }))
  try {
    const email = 'callers-revoked@example.com'
    const { authkey, holder, other } = await linkedDeviceInCluster(members, network, email)
    const send = () => answerOf(other, '/api/create-message', { authkey, appkey: 'loja', to: FRIEND, message: 'oi' })
    assert.is((await send()).status, 200, 'forwarded, and the caller remembered')
    await holder.gateway.accounts.rotateKey(email) // the old key stops working
    assert.is((await send()).status, 401, 'forwarded at once, refused by the holder: a failed attempt')
    const next = await send()
    assert.is(next.status, 429, `one failure allowed, counted: the key is refused from this client now: ${JSON.stringify(next.body)}`)
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test("a remembered caller's bad input refused by the holder (401 validation.required) is not a failed attempt of its valid key, as a direct one is not", async () => {
  const network = new MemoryNetwork()
  const members = await inProcessCluster(2, () => ({
    transport: memoryTransport({ network }),
    rateLimit: { perAccount: false, authFailures: { points: 1, duration: 900 }, authFailuresPerIp: false, registrations: false },
  }))
  try {
    const { authkey, holder, other } = await linkedDeviceInCluster(members, network, 'callers-bad-input@example.com')
    const send = (at: ClusterMember, body: Record<string, unknown>) => post(`${at.url}/api/create-message`, { authkey, appkey: 'loja', ...body })
    assert.is((await send(other, { to: FRIEND, message: 'oi' })).status, 200, 'forwarded, and the caller remembered')
    for (const at of [holder, other]) {
      for (let i = 0; i < 3; i++)
        assert.equal(
          (await send(at, { to: 'not a number', message: 'oi' })).body,
          { status: 401, message: 'validation.required' },
          `${at === holder ? 'holder' : 'other'} ${i}`,
        )
      const after = await send(at, { to: FRIEND, message: 'ok' })
      assert.is(after.status, 200, `the valid key still works after bad inputs: ${JSON.stringify(after.body)}`)
    }
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test.run()
