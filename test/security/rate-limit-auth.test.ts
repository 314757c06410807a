import assert from 'node:assert/strict'
import { suite } from 'uvu'
import type { GatewayOptions, Storage } from '../../src/index.ts'
import { assertError } from '../helpers/messaging.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { assertLimited, proxiedGateway, type ProxiedGateway } from '../helpers/rate-limit.ts'

/**
 * Failed authkeys: counted per presented key and client IP (30 per 15 minutes by default), with a
 * ceiling per IP (300) past which unknown keys are answered 429 instead of 401; a valid key is never
 * refused because of someone else's failures. Each case runs with the counters in this process's
 * memory (the default in-memory store) and in the store (a store with the atomic steps and no
 * `reach`, taken as one every instance reaches, as Redis and PostgreSQL are).
 */
const test = suite('rate limits of failed authkeys')

const WRONG = 'Authkey invalida ou expirada.'
const NAT = '203.0.113.7'
const ELSEWHERE = '198.51.100.9'

const homes: { name: string; storage: () => Storage | undefined }[] = [
  { name: 'in process memory', storage: () => undefined },
  { name: 'in the store', storage: () => memoryStorage() },
]

/** Run `body` with a gateway behind a trusted proxy, stopped after (also when `body` throws). */
async function withProxied(options: GatewayOptions, body: (g: ProxiedGateway) => Promise<void>): Promise<void> {
  const g = await proxiedGateway(options)
  try {
    await body(g)
  } finally {
    await g.stop()
  }
}

/** Operation 20 (the agent of device `loja`) with `authkey` from `ip`: 401 `Authkey invalida ou expirada.` for an unknown key. */
const agentCall = (g: ProxiedGateway, ip: string, authkey: string) => g.from(ip, '/api/v2/ia', { authkey, device: 'loja', agent_name: 'Bia' })

for (const home of homes) {
  test(`${home.name}: 40 wrong authkeys from one IP are each 401, and a valid tenant behind the same IP still gets 200`, async () => {
    const storage = home.storage()
    await withProxied(storage ? { storage } : {}, async g => {
      const honest = await g.tenant(NAT)
      for (let i = 0; i < 40; i++) assertError(await agentCall(g, NAT, `errada-${i}`), 401, WRONG)
      // The same wrong key 40 times over is locked; the honest tenant is not.
      for (let i = 0; i < 40; i++)
        assertError(await agentCall(g, NAT, 'errada-sempre'), i < 30 ? 401 : 429, i < 30 ? WRONG : 'Muitas requisições. Tente novamente mais tarde.')
      const answer = await g.status(NAT, honest)
      assert.equal(answer.status, 200, answer.text)
      assert.equal(answer.body.dispositivo.nome, 'loja')
    })
  })

  test(`${home.name}: the same wrong key 30 times from one IP, then it is 429 with Retry-After for that key from that IP only`, async () => {
    const storage = home.storage()
    await withProxied(storage ? { storage } : {}, async g => {
      for (let i = 0; i < 30; i++) assertError(await agentCall(g, NAT, 'chave-roubada'), 401, WRONG)
      assertLimited(await agentCall(g, NAT, 'chave-roubada'), 900)
      // Refused before the operation runs, on any path.
      assertLimited(await g.from(NAT, '/api/developer', { authkey: 'chave-roubada', message: 'loja', checkDispositivo: 'true' }), 900)
      assertError(await agentCall(g, NAT, 'outra-chave'), 401, WRONG)
      assertError(await agentCall(g, ELSEWHERE, 'chave-roubada'), 401, WRONG)
    })
  })

  test(`${home.name}: past authFailuresPerIp an unknown key from that IP is 429 instead of 401, a valid key from it still works, other IPs are not affected`, async () => {
    const storage = home.storage()
    await withProxied({ ...(storage ? { storage } : {}), rateLimit: { authFailuresPerIp: { points: 5, duration: 600 } } }, async g => {
      const honest = await g.tenant(NAT)
      for (let i = 0; i < 5; i++) assertError(await agentCall(g, NAT, `spray-${i}`), 401, WRONG)
      for (let i = 5; i < 8; i++) assertLimited(await agentCall(g, NAT, `spray-${i}`), 600)
      assertLimited(await g.status(NAT, 'spray-0'), 600)
      assert.equal((await g.status(NAT, honest)).status, 200)
      assertError(await agentCall(g, ELSEWHERE, 'spray-9'), 401, WRONG)
    })
  })
}

test('the default failed-attempt limits are 30 per key and IP and 300 per IP, each in 900 s; false switches one off', async () => {
  await withProxied({ rateLimit: { authFailures: false } }, async g => {
    for (let i = 0; i < 35; i++) assertError(await agentCall(g, NAT, 'sem-limite'), 401, WRONG)
  })
  // An hour's window (fixed windows): the three attempts fall in one but once in thousands of runs (with 60 s, now and then not).
  await withProxied({ rateLimit: { authFailures: { points: 2, duration: 3600 }, authFailuresPerIp: false } }, async g => {
    for (let i = 0; i < 2; i++) assertError(await agentCall(g, NAT, 'curta'), 401, WRONG)
    assertLimited(await agentCall(g, NAT, 'curta'), 3600)
  })
})

test('a valid authkey does not count as a failed attempt', async () => {
  await withProxied({ rateLimit: { authFailures: { points: 2, duration: 600 }, authFailuresPerIp: { points: 2, duration: 600 } } }, async g => {
    const authkey = await g.tenant(NAT)
    for (let i = 0; i < 5; i++) assert.equal((await g.status(NAT, authkey)).status, 200)
    assertError(await agentCall(g, NAT, 'errada'), 401, WRONG)
  })
})

test('counters in the store are named by hashes: no authkey and no IP reach it, and each expires with its window', async () => {
  const storage = memoryStorage()
  await withProxied({ storage }, async g => {
    const honest = await g.tenant(NAT)
    await g.status(NAT, honest)
    for (let i = 0; i < 3; i++) await agentCall(g, NAT, 'errada-guardada')
    const counters: [string, unknown][] = []
    for await (const entry of storage.list('ratelimit:')) counters.push(entry)
    const names = counters.map(([key]) => key.split(':')[1]).sort()
    assert.deepEqual([...new Set(names)], ['authFailures', 'authFailuresPerIp', 'perAccount', 'registrations'])
    assert.ok(
      counters.some(([key, value]) => key.startsWith('ratelimit:authFailures:') && value === 3),
      JSON.stringify(counters),
    )
    const text = JSON.stringify(counters)
    for (const secret of [honest, 'errada-guardada', NAT]) assert.ok(!text.includes(secret), `${secret} in the store`)
    for (const [key] of counters) assert.match(key, /^ratelimit:\w+:[0-9a-f]{32}$/)
  })
})

test('a store that fails or does not answer lets requests through, limits off, instead of failing them', async () => {
  for (const behaviour of ['fail', 'hang'] as const) {
    const storage = brokenCounters(memoryStorage(), behaviour)
    const rateLimit = { perAccount: { points: 1, duration: 60 }, authFailures: { points: 1, duration: 60 }, authFailuresPerIp: { points: 1, duration: 60 } }
    await withProxied({ storage, rateLimit }, async g => {
      const authkey = await g.tenant(NAT)
      for (let i = 0; i < 2; i++) assert.equal((await g.status(NAT, authkey)).status, 200, behaviour)
      for (let i = 0; i < 2; i++) assertError(await agentCall(g, NAT, 'errada'), 401, WRONG)
    })
  }
})

/** `storage` whose rate-limit counters fail (ECONNREFUSED) or never answer; everything else works. */
function brokenCounters(storage: ReturnType<typeof memoryStorage>, behaviour: 'fail' | 'hang'): Storage {
  const broken = () => (behaviour === 'fail' ? Promise.reject(new Error('ECONNREFUSED')) : new Promise<never>(() => {}))
  return {
    ...storage,
    get: key => (key.startsWith('ratelimit:') ? broken() : storage.get(key)),
    increment: (key, by, ttlMs) => (key.startsWith('ratelimit:') ? broken() : storage.increment(key, by, ttlMs)),
  }
}

test.run()
