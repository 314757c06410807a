import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { httpAgentResponder, type HttpAgentResponder } from '../../adapters/agent-http/index.ts'
import type { Logger } from '../../src/logger.ts'
import { startGateway, waitFor, type TestGateway } from '../helpers/gateway.ts'

/**
 * A JSON answer of the HTTP agent that is not an object with a `text` string (an array of texts, an
 * object naming the reply another way) is an error: no reply, and the host sees why in its logs
 * (before, it was taken as "no reply", silently: every answer of a mistyped agent was lost unlogged).
 * `{}` and `{"text": null}` stay no reply (`JSON.stringify({ text: undefined })` is `{}`).
 */

const DEVICE_PHONE = '5511999990001'
const CUSTOMER = '5511988880002'

const test = suite<{ server?: Server; responder?: HttpAgentResponder; t?: TestGateway }>('adapters/agent-http: an answer of another JSON shape')
test.after.each(async ctx => {
  await ctx.t?.stop()
  ctx.responder?.close()
  ctx.server?.closeAllConnections()
  await new Promise(resolve => (ctx.server ? ctx.server.close(resolve) : resolve(undefined)))
  ctx.t = ctx.responder = ctx.server = undefined
})

test('a JSON array, or an object without "text", reaches no customer and is logged as an error without the customer\'s text', async ctx => {
  const bodies = ['["Olá, Maria", "Tudo bem?"]', '{"reply": "Olá, Maria"}', '"Olá, Maria"', '{}', '{"text": "Olá, Maria"}']
  let asked = 0
  ctx.server = createServer(async (req, res) => {
    for await (const _chunk of req);
    res.writeHead(200, { 'content-type': 'application/json' }).end(bodies[asked++])
  })
  await new Promise<void>(resolve => ctx.server!.listen(0, '127.0.0.1', resolve))
  ctx.responder = httpAgentResponder({ url: `http://127.0.0.1:${(ctx.server.address() as AddressInfo).port}/agent`, allowPrivateUrls: true })
  const logged: { level: string; obj: unknown; msg?: string }[] = []
  const note = (level: string) => (obj: object | string, msg?: string) => void logged.push({ level, obj, msg })
  const logger: Logger = { debug: note('debug'), info: note('info'), warn: note('warn'), error: note('error') }
  ctx.t = await startGateway({ agentResponder: ctx.responder, logger })
  const { authkey } = await ctx.t.register()
  await ctx.t.linkedDevice(authkey, 'loja', DEVICE_PHONE)
  assert.is((await ctx.t.post('/api/v2/ia', { authkey, device: 'loja', agent_name: 'Bia' })).status, 200)
  const replies = () => ctx.t!.network.inbox(CUSTOMER).flatMap(entry => (entry.type === 'text' ? [entry.text] : []))

  for (const text of ['segredo um', 'segredo dois', 'segredo três', 'segredo quatro', 'segredo cinco'])
    await ctx.t.network.sendFromPhone(CUSTOMER, DEVICE_PHONE, { type: 'text', text })
  await waitFor(() => replies().length === 1, 5000, 'the reply to the fifth text')
  assert.equal(replies(), ['Olá, Maria'], 'only the {"text"} answer reached the customer')

  const failures = logged.filter(entry => entry.msg === 'agent responder failed; no reply sent')
  assert.equal(
    failures.map(entry => [entry.level, ((entry.obj as { err?: Error }).err ?? {}).message]),
    [
      ['warn', 'the agent answered a JSON array, not an object with a "text" string'],
      ['warn', 'the agent answered a JSON object without "text"'],
      ['warn', 'the agent answered a JSON string, not an object with a "text" string'],
    ],
  )
  assert.not.match(
    JSON.stringify(logged, (_key, value) => (value instanceof Error ? value.message : value)),
    /segredo/,
    "no log line holds the customer's text",
  )
})

test.run()
