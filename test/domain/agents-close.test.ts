import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { keyvStorage } from '../../adapters/storage-keyv/index.ts'
import { MemoryNetwork } from '../../adapters/transport-memory/index.ts'
import { internalsOf } from '../../src/internals.ts'
import type { AgentRequest } from '../../src/index.ts'
import { startGateway, waitFor } from '../helpers/gateway.ts'
import { DEVICE_PHONE, FRIEND } from '../helpers/messaging.ts'

/**
 * A graceful stop (gateway.close(), SIGTERM) while a contact's texts wait for the agent: they are
 * answered within the stop's grace (5 s); those an agent cannot answer in it are kept in the
 * conversation (what the next answer is given as history), never dropped from it.
 */
const test = suite('agents at a graceful stop')

/** A gateway whose agent answers through `responder`, a linked device with that agent, and the contact's three texts sent. */
async function threeTextsWaiting(responder: (request: AgentRequest) => Promise<string>) {
  const asked: string[] = []
  const t = await startGateway({
    storage: keyvStorage(),
    network: new MemoryNetwork(),
    rateLimit: false,
    agentResponder: request => (asked.push(request.text), responder(request)),
  })
  const { authkey } = await t.register()
  const device = await t.linkedDevice(authkey, 'loja', DEVICE_PHONE)
  assert.equal((await t.post('/api/v2/ia', { authkey, device: 'loja', agent_name: 'Bia' })).status, 200)
  for (const text of ['um', 'dois', 'tres']) await t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text })
  await waitFor(() => asked.length === 1, 5_000, 'the agent asked about the first text')
  const replies = () => t.network.inbox(FRIEND).flatMap(entry => (entry.type === 'text' && entry.from === DEVICE_PHONE ? [entry.text] : []))
  const history = async () => (await internalsOf(t.gateway).flows.history(device.id, FRIEND)).turns.map(turn => `${turn.role}: ${turn.text}`)
  return { t, asked, replies, history }
}

test('texts waiting for an agent that answers in 300 ms are all answered before the stop ends', async () => {
  const { t, asked, replies, history } = await threeTextsWaiting(
    async ({ text }) => (await new Promise(resolve => setTimeout(resolve, 300)), `resposta a ${text}`),
  )
  await t.stop()
  assert.deepEqual(asked, ['um', 'dois', 'tres'])
  assert.deepEqual(replies(), ['resposta a um', 'resposta a dois', 'resposta a tres'])
  assert.deepEqual(await history(), [
    'contact: um',
    'agent: resposta a um',
    'contact: dois',
    'agent: resposta a dois',
    'contact: tres',
    'agent: resposta a tres',
  ])
})

test('an agent that does not answer within the grace: the stop ends, and every text is kept in the conversation, unanswered', async () => {
  const { t, asked, replies, history } = await threeTextsWaiting(
    ({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
  )
  const started = Date.now()
  await t.stop()
  assert.ok(Date.now() - started < 8_000, `the stop took ${Date.now() - started} ms`)
  assert.deepEqual(asked, ['um'], 'the agent was not asked again once the stop was past its grace')
  assert.deepEqual(replies(), [])
  assert.deepEqual(await history(), ['contact: um', 'contact: dois', 'contact: tres'])
})

test.run()
