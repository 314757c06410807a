import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { connect } from 'node:net'
import { startStandalone, type StandaloneServer } from '../helpers/standalone.ts'
import { post, request } from '../helpers/http.ts'
import { windowOf } from '../../src/security/rate-counters.ts'

/**
 * The standalone server's limits set from its environment (issue 20.4 and 20.8): the proxy hops it
 * trusts for the client's IP, and the time a request body may take.
 */
const test = suite<{ server?: StandaloneServer }>('examples/standalone.ts: GATEWAY_TRUST_PROXY and GATEWAY_BODY_TIMEOUT_MS')
test.after.each(async ctx => {
  await ctx.server?.kill('SIGKILL')
})

let emails = 0
const register = (url: string, forwardedFor: string) =>
  request(`${url}/api/auth`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
    body: JSON.stringify({
      auth: 'registrar',
      nome: 'Ana',
      email: `ana${++emails}@example.com`,
      senha: 'senha-secreta',
      telefone: '5511912345678',
      plano: '1',
    }),
  })

test('GATEWAY_TRUST_PROXY=1: a spoofed left-most X-Forwarded-For does not change the IP the registrations-per-IP limit counts', async ctx => {
  const server = (ctx.server = await startStandalone({ GATEWAY_STORE: 'memory://', GATEWAY_TRUST_PROXY: '1' }))
  // The client writes any address it likes; the one proxy in front appends the address it saw: one whose hour-long window (fixed, at an
  // offset drawn from the address) has ten minutes left at least, so that its 21 registrations never straddle two windows (a CI run did).
  const [seen, other] = [...Array(50).keys()]
    .map(i => `203.0.113.${i + 1}`)
    .filter(ip => windowOf('registrations', { points: 20, duration: 3600 }, [ip], Date.now()).ttlMs > 600_000)
  for (let i = 0; i < 20; i++) assert.is((await register(server.url, `198.51.100.${i}, ${seen}`)).status, 200, `registration ${i}`)
  const refused = await register(server.url, `198.51.100.99, ${seen}`)
  assert.is(refused.status, 429, `20 registrations an hour from ${seen}, whatever it claims before it`)
  assert.ok(Number(refused.headers.get('retry-after')) > 0)
  assert.is((await register(server.url, `198.51.100.99, ${other}`)).status, 200, 'another client behind the proxy is counted apart')
})

test('GATEWAY_TRUST_PROXY must be a number of proxies', async () => {
  await startStandalone({ GATEWAY_STORE: 'memory://', GATEWAY_TRUST_PROXY: 'yes' }).then(
    server => server.kill('SIGKILL').then(() => assert.unreachable('should not start')),
    err => assert.match(String(err), /GATEWAY_TRUST_PROXY must be the number of proxies/),
  )
})

test('GATEWAY_LEASE_TTL_MS must be a whole number of milliseconds (not silently ignored)', async () => {
  await startStandalone({ GATEWAY_STORE: 'memory://', GATEWAY_CLUSTER_SECRET: 'secret-of-this-test', GATEWAY_LEASE_TTL_MS: '15s' }).then(
    server => server.kill('SIGKILL').then(() => assert.unreachable('should not start')),
    err => assert.match(String(err), /GATEWAY_LEASE_TTL_MS must be a whole number of milliseconds/),
  )
  // 0 is refused as a length, not taken for unset (the default 15 s ran silently before), naming the variable and its range.
  await startStandalone({ GATEWAY_STORE: 'memory://', GATEWAY_CLUSTER_SECRET: 'secret-of-this-test', GATEWAY_LEASE_TTL_MS: '0' }).then(
    server => server.kill('SIGKILL').then(() => assert.unreachable('should not start')),
    err => assert.match(String(err), 'GATEWAY_LEASE_TTL_MS must be a whole number of milliseconds from 400 to 3600000 (got \\"0\\")'),
  )
})

test('GATEWAY_BODY_TIMEOUT_MS: a body that stops half-way is answered 408 and the connection closed', async ctx => {
  const server = (ctx.server = await startStandalone({ GATEWAY_STORE: 'memory://', GATEWAY_BODY_TIMEOUT_MS: '500' }))
  const socket = connect(server.port, '127.0.0.1')
  let answer = ''
  socket.on('data', chunk => (answer += chunk.toString('utf8')))
  const closed = new Promise(resolve => socket.once('close', resolve))
  socket.write('POST /api/auth HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"auth":"regis')
  await closed
  assert.match(answer, /^HTTP\/1\.1 408 /)
  assert.match(answer, /Tempo esgotado ao receber a requisi/)
  assert.is((await post(`${server.url}/api/auth`, {})).status, 401, 'the server goes on serving')
})

test.run()
