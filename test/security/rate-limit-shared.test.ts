import { randomBytes } from 'node:crypto'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { post, type Answer } from '../helpers/http.ts'
import { assertError } from '../helpers/messaging.ts'
import { assertLimited } from '../helpers/rate-limit.ts'
import { needing, POSTGRES, REDIS } from '../helpers/requires.ts'
import { freePort, startStandalone, type StandaloneServer } from '../helpers/standalone.ts'

/**
 * Rate limits shared by gateway processes: two standalone servers (each a node process of its own)
 * in cluster mode on one Redis or one PostgreSQL, under a namespace of this run's own. Whichever
 * process a request reaches, it counts against the same limit, because the counters live in the
 * store. Every process is killed and the namespace emptied in `finally`, so a failure never hangs.
 */
const test = suite('rate limits shared by gateway processes on Redis and PostgreSQL')

const registration = { auth: 'registrar', nome: 'Ana', senha: 'segredo1', telefone: '5511900000000', plano: '1' }

for (const service of [REDIS, POSTGRES]) {
  const name = service.name
  const url = service.value!
  const onStore = needing(test, service, `rate limits shared by two gateway processes on ${name}`)

  onStore(`two gateway processes on one ${name} share the per-account limit and the failed-key lockout; a valid key from the same IP still works`, async () => {
    const namespace = `zapgate-test-rl-${randomBytes(4).toString('hex')}`
    const secret = randomBytes(24).toString('base64url')
    const servers: StandaloneServer[] = []
    try {
      for (let i = 0; i < 2; i++) {
        const port = await freePort()
        const env = {
          GATEWAY_STORE: url,
          GATEWAY_STORE_NAMESPACE: namespace,
          GATEWAY_CLUSTER_SECRET: secret,
          GATEWAY_ADVERTISE_URL: `http://127.0.0.1:${port}`,
          // An hour's window: windows are fixed (each counter's offset drawn from its key), so 41 requests straddle one end only once in thousands of runs (with 60 s, a run of a few seconds under load did now and then: 404 for the 41st).
          GATEWAY_RATE_LIMIT: '40/3600',
        }
        servers.push(await startStandalone(env, port))
      }
      const call = (i: number, path: string, body: Record<string, unknown>) => post(servers[i % 2]!.url + path, body)
      const register = async (email: string) => {
        const answer = await call(0, '/api/auth', { ...registration, email })
        assert.is(answer.status, 200, answer.text)
        return answer.body.data.authkey as string
      }
      const status = (i: number, authkey: string) => call(i, '/api/developer', { authkey, message: 'nenhum', checkDispositivo: 'true' })
      // The request past the limit is refused (429). A store call over a second lets its request through uncounted, as
      // documented and logged ("request let through"): on a loaded host one of those counted may have been, and only then
      // is one more let through (at most 3), never without that warning in a process's log.
      const refusedNext = async (send: (i: number) => Promise<Answer>, retryAfterMax: number, expected: [number, string]) => {
        let answer = await send(0)
        for (let extra = 1; extra <= 3 && answer.status !== 429 && servers.some(s => s.output().includes('request let through')); extra++) {
          assertError(answer, ...expected)
          answer = await send(extra)
        }
        assertLimited(answer, retryAfterMax)
      }

      // Per account key, 40 an hour: 20 requests through each process, then the 41st is refused by both.
      const first = await register(`ana-${namespace}@example.com`)
      for (let i = 0; i < 40; i++) assertError(await status(i, first), 404, 'Nenhum dispositivo encontrado.')
      await refusedNext(i => status(i, first), 3600, [404, 'Nenhum dispositivo encontrado.'])
      assertLimited(await status(1, first), 3600)

      // One wrong key 30 times, alternating processes: 401 each; then that key is refused by both.
      const wrong = { authkey: 'chave-errada', device: 'loja', agent_name: 'Bia' }
      for (let i = 0; i < 30; i++) assertError(await call(i, '/api/v2/ia', wrong), 401, 'Authkey invalida ou expirada.')
      await refusedNext(i => call(i, '/api/v2/ia', wrong), 900, [401, 'Authkey invalida ou expirada.'])
      assertLimited(await call(1, '/api/v2/ia', wrong), 900)

      // Another tenant behind the same address (127.0.0.1) is not locked out by those failures.
      const second = await register(`bia-${namespace}@example.com`)
      assertError(await status(0, second), 404, 'Nenhum dispositivo encontrado.')
      assertError(await status(1, second), 404, 'Nenhum dispositivo encontrado.')
    } finally {
      for (const server of servers) await server.kill('SIGKILL')
      await emptyNamespace(url, namespace)
    }
  })
}

/** Remove what the processes left under `namespace` on the shared server. */
async function emptyNamespace(url: string, namespace: string): Promise<void> {
  const storage = await storageFromUrl(url, { namespace })
  try {
    for await (const [key] of storage.list('')) await storage.delete(key)
  } finally {
    await storage.close?.()
  }
}

test.run()
