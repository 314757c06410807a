import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { httpAgentResponder, type HttpAgentResponder } from '../../adapters/agent-http/index.ts'
import type { AgentRequest } from 'zapgate'

/** An agent service that answers each request with the next of `answers` (content type, body bytes). */
async function agentServer(answers: [string, Buffer][]): Promise<{ url: string; stop(): Promise<void> }> {
  let next = 0
  const server: Server = createServer(async (req, res) => {
    for await (const _ of req);
    const [type, body] = answers[next++]
    res.writeHead(200, { 'content-type': type }).end(body)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent`,
    stop: async () => {
      server.closeAllConnections()
      await new Promise(resolve => server.close(resolve))
    },
  }
}

const request = (): AgentRequest => ({
  agent: { id: 'a1', name: 'Bia' },
  device: { id: 'd1', name: 'loja' },
  contact: { phone: '5511988880002', chat: '5511988880002' },
  text: 'oi',
  history: [],
  signal: new AbortController().signal,
})

const test = suite<{ stop?: () => Promise<void>; responder?: HttpAgentResponder }>('adapters/agent-http: the charset an answer declares')
test.after.each(async ctx => {
  ctx.responder?.close()
  await ctx.stop?.()
})

test('a text/plain or JSON answer in ISO-8859-1 (a Java servlet or Spring default) is read in that charset: the customer gets "Olá, você", not U+FFFD', async ctx => {
  const reply = 'Olá, você pediu um pão de queijo?'
  const server = await agentServer([
    ['text/plain;charset=ISO-8859-1', Buffer.from(reply, 'latin1')],
    ['application/json; charset="iso-8859-1"', Buffer.from(JSON.stringify({ text: reply }), 'latin1')],
    ['text/plain; charset=utf-8', Buffer.from(reply, 'utf8')],
    ['text/plain', Buffer.from(reply, 'utf8')],
  ])
  ctx.stop = server.stop
  ctx.responder = httpAgentResponder({ url: server.url, allowPrivateUrls: true })
  const replies = []
  for (let i = 0; i < 4; i++) replies.push(await ctx.responder.respond(request()))
  assert.equal(replies, [reply, reply, reply, reply])
})

test('an answer in a charset no decoder knows is an error (no reply), never sent garbled', async ctx => {
  const server = await agentServer([['text/plain; charset=x-unknown-7', Buffer.from('Olá', 'latin1')]])
  ctx.stop = server.stop
  ctx.responder = httpAgentResponder({ url: server.url, allowPrivateUrls: true })
  const outcome = await Promise.resolve(ctx.responder.respond(request())).then(
    reply => `answered ${reply}`,
    (err: Error) => err.message,
  )
  assert.is(outcome, 'the agent answered in charset x-unknown-7, which cannot be read')
})

test.run()
