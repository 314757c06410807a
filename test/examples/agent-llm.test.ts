import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import Koa from 'koa'
import { llmResponder } from '../../examples/agent-llm.ts'
import { listen } from '../helpers/http.ts'
import { startGateway, waitFor } from '../helpers/gateway.ts'

const test = suite('examples/agent-llm.ts (against a fake OpenAI-compatible endpoint)')

test('llmResponder sends the persona, the history and the text, and the model’s answer reaches the phone', async () => {
  const requests: { path: string; auth?: string; body: any }[] = []
  const app = new Koa()
  app.use(async ctx => {
    let raw = ''
    for await (const chunk of ctx.req) raw += chunk
    const body = JSON.parse(raw)
    requests.push({ path: ctx.path, auth: ctx.get('authorization'), body })
    ctx.body = { choices: [{ message: { role: 'assistant', content: `eco ${requests.length}: ${body.messages.at(-1).content}` } }] }
  })
  const llm = await listen(app)
  const t = await startGateway({ agentResponder: llmResponder({ baseUrl: `${llm.url}/`, apiKey: 'sk-test', model: 'tiny' }) })
  try {
    const { authkey } = await t.register()
    await t.linkedDevice(authkey, 'llm-device', '5511999990001')
    await t.post('/api/v2/ia', { authkey, device: 'llm-device', agent_name: 'Bia' })
    const replies = () => t.network.inbox('5511988880002').flatMap(entry => (entry.type === 'text' ? [entry.text] : []))
    await t.network.sendFromPhone('5511988880002', '5511999990001', { type: 'text', text: 'oi' })
    await waitFor(() => replies().length === 1)
    await t.network.sendFromPhone('5511988880002', '5511999990001', { type: 'text', text: 'tudo bem?' })
    await waitFor(() => replies().length === 2)
    assert.equal(replies(), ['eco 1: oi', 'eco 2: tudo bem?'])
    assert.is(requests[0].path, '/v1/chat/completions')
    assert.is(requests[0].auth, 'Bearer sk-test')
    assert.is(requests[1].body.model, 'tiny')
    assert.equal(
      requests[1].body.messages.map((m: any) => m.role),
      ['system', 'user', 'assistant', 'user'],
    )
    assert.match(requests[1].body.messages[0].content, /Bia/)
  } finally {
    await t.stop()
    await llm.stop()
  }
})

test.run()
