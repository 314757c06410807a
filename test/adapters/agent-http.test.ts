import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { httpAgentResponder, type HttpAgentResponder } from '../../adapters/agent-http/index.ts'
import type { AgentRequest } from 'zapgate'
import { startGateway, waitFor, type TestGateway } from '../helpers/gateway.ts'

const DEVICE_PHONE = '5511999990001'
const CUSTOMER = '5511988880002'

/** A real HTTP agent service: records each request's body and headers, answers with `handle`. */
interface AgentServer {
  url: string
  received: { body: any; headers: IncomingMessage['headers'] }[]
  /** Requests whose client went away before the answer. */
  abandoned: number
  handle: (body: any, res: ServerResponse) => void
  stop(): Promise<void>
}

async function startAgentServer(handle: AgentServer['handle']): Promise<AgentServer> {
  const agent: AgentServer = { url: '', received: [], abandoned: 0, handle, stop: async () => {} }
  const server: Server = createServer(async (req, res) => {
    let raw = ''
    for await (const chunk of req) raw += chunk
    agent.received.push({ body: JSON.parse(raw), headers: req.headers })
    res.once('close', () => !res.writableFinished && agent.abandoned++)
    agent.handle(JSON.parse(raw), res)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  agent.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent`
  agent.stop = async () => {
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))
  }
  return agent
}

const send = (res: ServerResponse, status: number, type: string | undefined, body: string) => {
  res.writeHead(status, type ? { 'content-type': type } : {}).end(body)
}

const request = (text: string, signal = new AbortController().signal): AgentRequest => ({
  agent: { id: 'a1', name: 'Bia' },
  device: { id: 'd1', name: 'loja', phone: DEVICE_PHONE },
  contact: { phone: CUSTOMER, name: 'Maria', chat: CUSTOMER },
  text,
  history: [{ role: 'contact', text: 'oi', at: 1 }],
  signal,
})

const test = suite<{ agent?: AgentServer; responder?: HttpAgentResponder; t?: TestGateway }>('adapters/agent-http: the gateway asks an agent over HTTP')
test.after.each(async ctx => {
  await ctx.t?.stop()
  ctx.responder?.close()
  await ctx.agent?.stop()
  ctx.t = ctx.responder = ctx.agent = undefined
})

test('a gateway with the HTTP agent POSTs the agent request as JSON and sends the answer text to the customer', async ctx => {
  ctx.agent = await startAgentServer((body, res) =>
    send(res, 200, 'application/json', JSON.stringify({ text: `  ${body.agent.name}: você disse "${body.text}"  ` })),
  )
  ctx.responder = httpAgentResponder({ url: ctx.agent.url, allowPrivateUrls: true, headers: { authorization: 'Bearer segredo' } })
  ctx.t = await startGateway({ agentResponder: ctx.responder })
  const { authkey } = await ctx.t.register()
  const device = await ctx.t.linkedDevice(authkey, 'loja', DEVICE_PHONE)
  assert.is((await ctx.t.post('/api/v2/ia', { authkey, device: 'loja', agent_name: 'Bia' })).status, 200)
  ctx.t.network.registerPhone(CUSTOMER, { pushName: 'Maria' })

  await ctx.t.network.sendFromPhone(CUSTOMER, DEVICE_PHONE, { type: 'text', text: 'quero um bolo' })
  const replies = () => ctx.t!.network.inbox(CUSTOMER).flatMap(entry => (entry.type === 'text' ? [entry.text] : []))
  await waitFor(() => replies().length === 1, 5000, 'the reply')
  assert.equal(replies(), ['Bia: você disse "quero um bolo"'])

  const [{ body, headers }] = ctx.agent.received
  assert.is(headers['content-type'], 'application/json')
  assert.is(headers.authorization, 'Bearer segredo')
  assert.equal(Object.keys(body).sort(), ['agent', 'contact', 'device', 'history', 'text'])
  assert.is(body.text, 'quero um bolo')
  assert.is(body.agent.name, 'Bia')
  assert.equal(body.device, { id: device.id, name: 'loja', phone: DEVICE_PHONE })
  assert.equal(body.contact, { phone: CUSTOMER, name: 'Maria', chat: CUSTOMER })
  assert.equal(body.history, [])

  await ctx.t.network.sendFromPhone(CUSTOMER, DEVICE_PHONE, { type: 'text', text: 'de chocolate' })
  await waitFor(() => replies().length === 2, 5000, 'the second reply')
  assert.equal(
    ctx.agent.received[1].body.history.map((turn: { role: string; text: string }) => [turn.role, turn.text]),
    [
      ['contact', 'quero um bolo'],
      ['agent', 'Bia: você disse "quero um bolo"'],
    ],
  )
})

test('a gateway whose HTTP agent does not answer in time, or fails, sends no reply and keeps answering later texts', async ctx => {
  let mode: 'hang' | 'fail' | 'answer' = 'hang'
  ctx.agent = await startAgentServer((body, res) => {
    if (mode === 'fail') send(res, 500, 'text/plain', 'boom')
    else if (mode === 'answer') send(res, 200, 'text/plain', `ok: ${body.text}`)
  })
  ctx.responder = httpAgentResponder({ url: ctx.agent.url, allowPrivateUrls: true })
  ctx.t = await startGateway({ agentResponder: ctx.responder, agentTimeoutMs: 300 })
  const { authkey } = await ctx.t.register()
  await ctx.t.linkedDevice(authkey, 'loja', DEVICE_PHONE)
  assert.is((await ctx.t.post('/api/v2/ia', { authkey, device: 'loja', agent_name: 'Bia' })).status, 200)
  const replies = () => ctx.t!.network.inbox(CUSTOMER).flatMap(entry => (entry.type === 'text' ? [entry.text] : []))

  await ctx.t.network.sendFromPhone(CUSTOMER, DEVICE_PHONE, { type: 'text', text: 'um' })
  await waitFor(() => ctx.agent!.abandoned === 1, 5000, 'the gateway to give up on the hanging agent and close the request')
  mode = 'fail'
  await ctx.t.network.sendFromPhone(CUSTOMER, DEVICE_PHONE, { type: 'text', text: 'dois' })
  await waitFor(() => ctx.agent!.received.length === 2, 5000, 'the second request')
  mode = 'answer'
  await ctx.t.network.sendFromPhone(CUSTOMER, DEVICE_PHONE, { type: 'text', text: 'três' })
  await waitFor(() => replies().length === 1, 5000, 'the reply to the third text')
  assert.equal(replies(), ['ok: três'], 'the hanging and the failing answer sent nothing')
})

test('respond() reads text/plain and JSON answers; 204, null and empty text mean no reply', async ctx => {
  const answers: [number, string | undefined, string][] = [
    [200, 'text/plain; charset=utf-8', 'Olá!'],
    [200, 'application/json', '{"text":"Oi, Maria"}'],
    [200, 'application/json', '{"text":null}'],
    [200, 'application/json', '{}'],
    [204, undefined, ''],
  ]
  ctx.agent = await startAgentServer((_body, res) => send(res, ...answers[ctx.agent!.received.length - 1]))
  ctx.responder = httpAgentResponder({ url: ctx.agent.url, allowPrivateUrls: true })
  const replies = []
  for (let i = 0; i < answers.length; i++) replies.push(await ctx.responder.respond(request(`texto ${i}`)))
  assert.equal(replies, ['Olá!', 'Oi, Maria', null, undefined, undefined])
  assert.equal(ctx.agent.received[0].body, {
    agent: { id: 'a1', name: 'Bia' },
    device: { id: 'd1', name: 'loja', phone: DEVICE_PHONE },
    contact: { phone: CUSTOMER, name: 'Maria', chat: CUSTOMER },
    text: 'texto 0',
    history: [{ role: 'contact', text: 'oi', at: 1 }],
  })
})

test('respond() rejects another status, a JSON answer without a text string, another content type, or an answer too long', async ctx => {
  const answers: [number, string | undefined, string][] = [
    [500, 'text/plain', 'erro'],
    [302, 'text/plain', ''],
    [200, 'application/json', '{"text":42}'],
    [200, 'application/json', 'not json'],
    [200, 'text/html', '<p>oi</p>'],
    [200, 'text/plain', 'x'.repeat(2000)],
  ]
  ctx.agent = await startAgentServer((_body, res) => send(res, ...answers[ctx.agent!.received.length - 1]))
  ctx.responder = httpAgentResponder({ url: ctx.agent.url, allowPrivateUrls: true, maxResponseBytes: 1000 })
  const errors = []
  for (let i = 0; i < answers.length; i++)
    errors.push(
      await Promise.resolve(ctx.responder.respond(request('x'))).then(
        () => 'answered',
        (err: Error) => err.message,
      ),
    )
  assert.equal(errors, [
    'the agent answered HTTP 500',
    'the agent answered HTTP 302',
    'the agent answered JSON without a "text" string',
    'the agent answered JSON that does not parse',
    'the agent answered text/html, not text/plain or JSON',
    'the agent answered more than 1000 bytes',
  ])
})

test('respond() stops when the request signal aborts (the gateway gave up), closing the connection', async ctx => {
  ctx.agent = await startAgentServer(() => {})
  ctx.responder = httpAgentResponder({ url: ctx.agent.url, allowPrivateUrls: true })
  const controller = new AbortController()
  const pending = Promise.resolve(ctx.responder.respond(request('x', controller.signal))).then(
    () => 'answered',
    () => 'rejected',
  )
  await waitFor(() => ctx.agent!.received.length === 1, 5000, 'the request to arrive')
  controller.abort(new Error('the agent did not answer within 10 ms'))
  assert.is(await pending, 'rejected')
  await waitFor(() => ctx.agent!.abandoned === 1, 5000, 'the connection to close')
})

test('the agent URL goes through the webhook URL guard: private, loopback and malformed URLs are refused unless allowed', async () => {
  assert.throws(() => httpAgentResponder({ url: 'http://127.0.0.1:9/agent' }), /agent URL refused \(private\)/)
  assert.throws(() => httpAgentResponder({ url: 'http://10.0.0.5/agent' }), /agent URL refused \(private\)/)
  assert.throws(() => httpAgentResponder({ url: 'ftp://agent.example.com/' }), /agent URL refused \(scheme\)/)
  assert.throws(
    () => httpAgentResponder({ url: 'https://user:senha@agent.example.com/' }),
    /agent URL refused \(credentials\): https:\/\/\*\*\*@agent\.example\.com\//,
  )
  httpAgentResponder({ url: 'http://127.0.0.1:9/agent', allowPrivateUrls: true }).close()
})

test('a public agent name that resolves to a private address is refused at connect time', async ctx => {
  ctx.agent = await startAgentServer((_body, res) => send(res, 200, 'text/plain', 'should not be reached'))
  const port = new URL(ctx.agent.url).port
  ctx.responder = httpAgentResponder({
    url: `http://agent.example.com:${port}/agent`,
    lookup: ((_host: string, options: unknown, callback: (err: Error | null, address: unknown, family?: number) => void) => {
      const all = typeof options === 'object' && options !== null && (options as { all?: boolean }).all
      if (all) callback(null, [{ address: '127.0.0.1', family: 4 }])
      else callback(null, '127.0.0.1', 4)
    }) as never,
  })
  const outcome = await Promise.resolve(ctx.responder.respond(request('x'))).then(
    () => 'answered',
    (err: Error) => err.message,
  )
  assert.match(outcome, /127\.0\.0\.1/)
  assert.is(ctx.agent.received.length, 0, 'nothing reached the private address')
})

test.run()
