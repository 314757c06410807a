import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import pino from 'pino'
import { createServer, type Server } from 'node:net'
import type { AddressInfo } from 'node:net'
import { httpAgentResponder, type HttpAgentResponder } from '../../adapters/agent-http/index.ts'
import { startGateway, waitFor, type TestGateway } from '../helpers/gateway.ts'

/**
 * An HTTP agent that cannot be reached (the connection refused or reset) is logged by the gateway,
 * with pino's standard error serializer, as what went wrong: never the request it was sent, which
 * holds the customer's text, the conversation's history and the agent's `authorization` header
 * (SECURITY.md: the gateway never logs a request body). Before, got's RequestError carried its whole
 * request options (body and headers) in an enumerable field that pino wrote out.
 */

const DEVICE_PHONE = '5511999990001'
const CUSTOMER = '5511988880002'
const TOKEN = 'segredo-do-agente-7f3a'

const test = suite<{ server?: Server; responder?: HttpAgentResponder; t?: TestGateway }>('adapters/agent-http: what a failed request logs')
test.after.each(async ctx => {
  await ctx.t?.stop()
  ctx.responder?.close()
  await new Promise(resolve => (ctx.server ? ctx.server.close(resolve) : resolve(undefined)))
  ctx.t = ctx.responder = ctx.server = undefined
})

test("a connection reset, or refused, is logged by its cause, without the customer's text, the history or the agent's token", async ctx => {
  ctx.server = createServer(socket => socket.destroy()) // accepts, then resets: the agent crashed mid-request
  await new Promise<void>(resolve => ctx.server!.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(ctx.server.address() as AddressInfo).port}/agent`
  const lines: string[] = []
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) })
  ctx.responder = httpAgentResponder({ url, allowPrivateUrls: true, headers: { authorization: `Bearer ${TOKEN}` } })
  ctx.t = await startGateway({ agentResponder: ctx.responder, logger })
  const { authkey } = await ctx.t.register()
  await ctx.t.linkedDevice(authkey, 'loja', DEVICE_PHONE)
  assert.is((await ctx.t.post('/api/v2/ia', { authkey, device: 'loja', agent_name: 'Bia' })).status, 200)
  const failures = () => lines.filter(line => line.includes('agent responder failed')).map(line => JSON.parse(line))

  await ctx.t.network.sendFromPhone(CUSTOMER, DEVICE_PHONE, { type: 'text', text: 'meu cpf é 123.456.789-00' })
  await waitFor(() => failures().length === 1, 5000, 'the reset to be logged')
  await new Promise(resolve => ctx.server!.close(resolve)) // nothing listens there now: refused
  ctx.server = undefined
  await ctx.t.network.sendFromPhone(CUSTOMER, DEVICE_PHONE, { type: 'text', text: 'minha senha do banco é 4321' })
  await waitFor(() => failures().length === 2, 5000, 'the refusal to be logged')

  assert.equal(
    failures().map(line => [line.level, line.err.code]),
    [
      [40, 'ECONNRESET'],
      [40, 'ECONNREFUSED'],
    ],
    'each failure logged as a warning naming its cause',
  )
  const all = lines.join('\n')
  for (const secret of ['123.456.789-00', 'senha do banco', TOKEN]) assert.not.ok(all.includes(secret), `the logs hold ${secret}`)
  assert.is(ctx.t.network.inbox(CUSTOMER).length, 0, 'no reply was sent')
})

test.run()
