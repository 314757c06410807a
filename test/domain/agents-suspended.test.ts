import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { internalsOf } from '../../src/internals.ts'
import { startGateway, waitFor, type TestGateway } from '../helpers/gateway.ts'
import { DEVICE_PHONE, FRIEND } from '../helpers/messaging.ts'

/**
 * A suspended account's agents stop answering (the host suspends for non-payment and expects the
 * account to stop sending); resumed, they answer again. Texts of one contact are answered in order,
 * so the reply to a text sent after the resume shows the one before it was handled; the test resumes
 * the account once the gateway has looked at it for the text sent while suspended.
 */
const test = suite<{ t: TestGateway }>('agents of a suspended account do not reply')

test.after.each(async ctx => {
  await ctx.t?.stop()
})

test('a text while the account is suspended gets no reply; one after the resume does', async ctx => {
  const t = (ctx.t = await startGateway({ agentResponder: ({ text }) => `Você disse: ${text}` }))
  const { authkey, email } = await t.register()
  await t.linkedDevice(authkey, 'loja', DEVICE_PHONE)
  assert.equal((await t.post('/api/v2/ia', { authkey, device: 'loja', agent_name: 'Atendente' })).status, 200)
  const replies = () => t.network.inbox(FRIEND).flatMap(entry => (entry.type === 'text' && entry.from === DEVICE_PHONE ? [entry.text] : []))
  await t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'antes' })
  await waitFor(() => replies().length === 1, 5000, 'the reply while active')
  const { accounts } = internalsOf(t.gateway)
  const active = accounts.active
  let refused = 0
  accounts.active = (account => active(account) || (refused++, false)) as typeof active
  await t.gateway.accounts.suspend(email)
  await t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'suspensa' })
  await waitFor(() => refused > 0 || replies().length > 1, 5000, 'the text sent while suspended to be handled')
  await t.gateway.accounts.resume(email)
  await t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'de volta' })
  await waitFor(() => replies().length >= 2, 5000, 'the reply after the resume')
  assert.deepEqual(replies(), ['Você disse: antes', 'Você disse: de volta'])
})

test.run()
