import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startAgentDemo, ruleBasedResponder } from '../../examples/agent-rule-based.ts'
import { post, request } from '../helpers/http.ts'
import { waitFor } from '../helpers/gateway.ts'
import type { AgentRequest } from '../../src/ports/agents.ts'

const test = suite('examples/agent-rule-based.ts')

const DEVICE_PHONE = '5511911112222'
const CUSTOMER = '5511933334444'

test('the recipe of its header works over HTTP: the customer gets the menu, then the answer to a rule', async () => {
  const demo = await startAgentDemo(0)
  try {
    const registered = await post(`${demo.url}/api/auth`, {
      auth: 'registrar',
      nome: 'Ana',
      email: 'ana@example.com',
      senha: 'segredo1',
      telefone: '5511999990000',
      plano: '1',
    })
    const authkey = registered.body.data.authkey
    assert.is((await post(`${demo.url}/api/v2/qrcode`, { authkey, setAppkey: 'loja' })).status, 200)
    assert.is((await post(`${demo.url}/_sim/scan`, { authkey, appkey: 'loja', phone: DEVICE_PHONE })).status, 200)
    assert.is((await post(`${demo.url}/api/v2/ia`, { authkey, device: 'loja', agent_name: 'Bia' })).status, 200)
    const inbox = async () => ((await request(`${demo.url}/_sim/inbox/${CUSTOMER}`)).body as { text?: string }[]).map(entry => entry.text)

    await post(`${demo.url}/_sim/send`, { from: CUSTOMER, to: DEVICE_PHONE, type: 'text', text: 'oi' })
    await waitFor(async () => (await inbox()).length === 1)
    assert.match((await inbox())[0]!, /^Olá! Eu sou Bia\. Posso ajudar com:/)

    await post(`${demo.url}/_sim/send`, { from: CUSTOMER, to: DEVICE_PHONE, type: 'text', text: 'horário?' })
    await waitFor(async () => (await inbox()).length === 2)
    assert.is((await inbox())[1], 'Abrimos de segunda a sábado, das 9h às 18h.')
  } finally {
    await demo.stop()
  }
})

test('ruleBasedResponder suggests a person after two texts it cannot understand', () => {
  const request = (text: string, history: AgentRequest['history']) =>
    ({
      agent: { id: 'a', name: 'Bia' },
      device: { id: 'd', name: 'loja' },
      contact: { chat: CUSTOMER },
      text,
      history,
      signal: new AbortController().signal,
    }) as AgentRequest
  const greeting = [{ role: 'agent' as const, text: 'Olá!', at: 1 }]
  const first = ruleBasedResponder.respond(request('xyz', greeting)) as string
  assert.match(first, /^Não entendi "xyz"/)
  const second = ruleBasedResponder.respond(request('abc', [...greeting, { role: 'agent', text: first, at: 2 }]))
  assert.is(second, 'Ainda não entendi. Digite *3* para falar com uma pessoa.')
})

test.run()
