import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { post, request } from '../helpers/http.ts'
import { parseMetrics } from '../helpers/metrics.ts'
import { startStandalone, type StandaloneServer } from '../helpers/standalone.ts'

const test = suite<{ server?: StandaloneServer }>('standalone server: GATEWAY_METRICS, GATEWAY_DOCS, /health')
test.after(async ctx => {
  await ctx.server?.kill('SIGKILL')
})

test('GATEWAY_METRICS=1 serves /metrics beside /health and /docs; GATEWAY_DOCS=0 turns the docs off', async ctx => {
  ctx.server = await startStandalone({ GATEWAY_STORE: 'memory://', GATEWAY_METRICS: '1' })
  const { url } = ctx.server
  const registered = await post(`${url}/api/auth`, {
    auth: 'registrar',
    nome: 'Ana',
    email: 'ana@example.com',
    senha: 'senha-secreta',
    telefone: '5511999990000',
    plano: '1',
  })
  assert.is(registered.status, 200)
  const metrics = await request(`${url}/metrics`)
  assert.is(metrics.status, 200)
  assert.is(parseMetrics(metrics.text).value('zapgate_http_requests_total', { operation: 'registerUser', status: '200' }), 1)
  assert.is((await request(`${url}/health`)).body.status, 200)
  assert.is((await request(`${url}/openapi.json`)).body.openapi, '3.1.0')
  assert.is((await request(`${url}/docs`)).status, 200)
  await ctx.server.kill('SIGKILL')

  ctx.server = await startStandalone({ GATEWAY_STORE: 'memory://', GATEWAY_DOCS: '0' })
  assert.is((await request(`${ctx.server.url}/docs`)).status, 404)
  assert.is((await request(`${ctx.server.url}/metrics`)).status, 404, 'metrics are off without GATEWAY_METRICS')
})

test.run()
