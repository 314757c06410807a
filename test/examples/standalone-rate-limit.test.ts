import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { ChildProcess } from 'node:child_process'
import { post } from '../helpers/http.ts'
import { killRedis, REDIS_SERVER, startRedis } from '../helpers/redis-server.ts'
import { needing } from '../helpers/requires.ts'
import { freePort, startStandalone, tempDir, type StandaloneServer } from '../helpers/standalone.ts'

const test = suite('standalone server: GATEWAY_RATE_LIMIT')

const registration = { auth: 'registrar', nome: 'Ana', email: 'ana@example.com', senha: 'segredo1', telefone: '5511900000000', plano: '1' }

test('GATEWAY_RATE_LIMIT=<points>/<seconds> limits the requests of an account key', async () => {
  // An hour's window (fixed windows): the four requests fall in one but once in thousands of runs (a minute's could end among them).
  const server = await startStandalone({ GATEWAY_STORE: 'memory://', GATEWAY_RATE_LIMIT: '3/3600' })
  try {
    const authkey = (await post(`${server.url}/api/auth`, registration)).body.data.authkey
    const status = () => post(`${server.url}/api/developer`, { authkey, message: 'nenhum', checkDispositivo: 'true' })
    for (let i = 0; i < 3; i++) assert.is((await status()).status, 404)
    const limited = await status()
    assert.is(limited.status, 429)
    assert.ok(Number(limited.headers.get('retry-after')) >= 1)
  } finally {
    await server.kill()
  }
})

const withRedis = needing(test, REDIS_SERVER, 'the shared-limit test of the standalone server')

withRedis('two standalone servers in cluster mode on one redis:// store share the limit', async () => {
  const port = await freePort()
  let redis: ChildProcess | undefined
  const servers: StandaloneServer[] = []
  try {
    redis = await startRedis(port, tempDir('zapgate-redis-'))
    // Several processes on one store run in cluster mode (a second plain one is refused at start).
    const env = { GATEWAY_STORE: `redis://127.0.0.1:${port}`, GATEWAY_RATE_LIMIT: '3/3600', GATEWAY_CLUSTER_SECRET: 'a-secret-both-servers-share' }
    for (let i = 0; i < 2; i++) {
      const serverPort = await freePort()
      servers.push(await startStandalone({ ...env, GATEWAY_ADVERTISE_URL: `http://127.0.0.1:${serverPort}` }, serverPort))
    }
    const authkey = (await post(`${servers[0].url}/api/auth`, registration)).body.data.authkey
    const status = (server: StandaloneServer) => post(`${server.url}/api/developer`, { authkey, message: 'nenhum', checkDispositivo: 'true' })
    assert.is((await status(servers[0])).status, 404)
    assert.is((await status(servers[1])).status, 404)
    assert.is((await status(servers[0])).status, 404)
    assert.is((await status(servers[1])).status, 429)
    assert.is((await status(servers[0])).status, 429)
  } finally {
    for (const server of servers) await server.kill('SIGKILL')
    if (redis) await killRedis(redis)
  }
})

test.run()
