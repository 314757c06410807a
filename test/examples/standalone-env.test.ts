import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { waitFor } from '../helpers/gateway.ts'
import { post, request } from '../helpers/http.ts'
import { startStandalone, tempDir, type StandaloneServer } from '../helpers/standalone.ts'

const DEVICE_PHONE = '5511911112222'
const CUSTOMER = '5511933334444'

const test = suite<{ server?: StandaloneServer; agent?: Server; dirs: string[] }>(
  'standalone server: GATEWAY_HTTP_STATUS, GATEWAY_AGENT_URL, default store files',
  { dirs: [] },
)
test.after.each(async ctx => {
  await ctx.server?.kill('SIGKILL')
  ctx.server = undefined
  ctx.agent?.closeAllConnections()
  await new Promise(resolve => (ctx.agent ? ctx.agent.close(resolve) : resolve(undefined)))
  ctx.agent = undefined
})
test.after(ctx => {
  for (const dir of ctx.dirs) rmSync(dir, { recursive: true, force: true })
})

test('GATEWAY_HTTP_STATUS=always200 answers HTTP 200 with the real status in the body; another value stops the start', async ctx => {
  ctx.server = await startStandalone({ GATEWAY_STORE: 'memory://', GATEWAY_HTTP_STATUS: 'always200' })
  const refused = await post(`${ctx.server.url}/api/create-message`, { appkey: 'loja', authkey: 'wrong', to: '5511988880002', message: 'oi' })
  assert.equal([refused.status, refused.body], [200, { status: 401, message: 'validation.required' }])
  await ctx.server.kill('SIGKILL')

  ctx.server = await startStandalone({ GATEWAY_STORE: 'memory://' })
  assert.is(
    (await post(`${ctx.server.url}/api/create-message`, { appkey: 'loja', authkey: 'wrong', to: '5511988880002', message: 'oi' })).status,
    401,
    'mirror by default',
  )
  await ctx.server.kill('SIGKILL')

  const failed = await startStandalone({ GATEWAY_STORE: 'memory://', GATEWAY_HTTP_STATUS: 'sempre200' }).then(
    () => 'started',
    (err: Error) => err.message,
  )
  assert.match(failed, 'GATEWAY_HTTP_STATUS must be mirror or always200, not \\"sempre200\\"')
})

test('GATEWAY_AGENT_URL: the gateway POSTs each text for an agent to the URL and sends back the answer text', async ctx => {
  const asked: { text: string; agent: { name: string } }[] = []
  ctx.agent = createServer(async (req, res) => {
    let raw = ''
    for await (const chunk of req) raw += chunk
    const body = JSON.parse(raw)
    asked.push(body)
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ text: `${body.agent.name} recebeu: ${body.text}` }))
  })
  await new Promise<void>(resolve => ctx.agent!.listen(0, '127.0.0.1', resolve))
  const agentUrl = `http://127.0.0.1:${(ctx.agent.address() as AddressInfo).port}/responder`
  ctx.server = await startStandalone({ GATEWAY_STORE: 'memory://', GATEWAY_AGENT_URL: agentUrl, GATEWAY_ALLOW_PRIVATE_URLS: '1' })
  const { url } = ctx.server
  const authkey = (
    await post(`${url}/api/auth`, { auth: 'registrar', nome: 'Ana', email: 'ana@example.com', senha: 'segredo1', telefone: '5511999990000', plano: '1' })
  ).body.data.authkey
  assert.is((await post(`${url}/api/v2/qrcode`, { authkey, setAppkey: 'loja' })).status, 200)
  assert.is((await post(`${url}/_sim/scan`, { authkey, appkey: 'loja', phone: DEVICE_PHONE })).status, 200)
  assert.is((await post(`${url}/api/v2/ia`, { authkey, device: 'loja', agent_name: 'Bia' })).status, 200)
  assert.is((await post(`${url}/_sim/send`, { from: CUSTOMER, to: DEVICE_PHONE, type: 'text', text: 'oi' })).status, 200)
  const replies = async () => ((await request(`${url}/_sim/inbox/${CUSTOMER}`)).body as { text?: string }[]).map(entry => entry.text)
  await waitFor(async () => (await replies()).length === 1, 10_000, 'the agent reply')
  assert.equal(await replies(), ['Bia recebeu: oi'])
  assert.equal(
    asked.map(body => body.text),
    ['oi'],
  )
})

test('GATEWAY_AGENT_URL goes through the URL guard: a loopback agent without GATEWAY_ALLOW_PRIVATE_URLS stops the start', async () => {
  const failed = await startStandalone({ GATEWAY_STORE: 'memory://', GATEWAY_AGENT_URL: 'http://127.0.0.1:9/responder' }).then(
    () => 'started',
    (err: Error) => err.message,
  )
  assert.match(failed, 'agent URL refused (private)')
})

test('the simulated network and WhatsApp keep separate default store files', async ctx => {
  const dir = tempDir()
  ctx.dirs.push(dir)
  ctx.server = await startStandalone({}, undefined, dir)
  assert.ok(ctx.server.output().includes('"store":"sqlite://./data/gateway-memory.sqlite"'))
  await ctx.server.kill('SIGTERM')
  assert.ok(existsSync(join(dir, 'data/gateway-memory.sqlite')))
  assert.not.ok(existsSync(join(dir, 'data/gateway.sqlite')))

  ctx.server = await startStandalone({ GATEWAY_TRANSPORT: 'baileys' }, undefined, dir)
  assert.ok(ctx.server.output().includes('"store":"sqlite://./data/gateway.sqlite"'))
  await ctx.server.kill('SIGTERM')
  assert.ok(existsSync(join(dir, 'data/gateway.sqlite')))
})

test.run()
