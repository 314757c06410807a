import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { gatewayWithDevice } from '../helpers/gateway.ts'

// The spec (Authentication 3, Errors): an invalid authkey is 401, in operation 2's words `Authkey
// invalida ou expirada.` (its 400 is for missing parameters) and in operation 6's `Authkey Invalida`.
// An authkey longer than 256 characters (a key pasted twice, with a header glued on...) is present
// and invalid; operation 2 answered it 400 `validation.required`, operation 6 401 `validation.required`.
test('an over-long authkey is the invalid authkey of operations 2 and 6', async () => {
  const { t, authkey } = await gatewayWithDevice()
  try {
    const long = authkey.repeat(10)
    const agent = await t.post('/api/v2/ia', { authkey: long, device: 'loja', agent_name: 'Bia' })
    assert.is(agent.status, 401, agent.text)
    assert.equal(agent.body, { status: 401, message: 'Authkey invalida ou expirada.' })
    const deleted = await t.post('/api/developer', { authkey: long, message: 'loja', apagarDispositivo: 'true' })
    assert.is(deleted.status, 401, deleted.text)
    assert.equal(deleted.body, { status: 401, message: 'Authkey Invalida' })
    assert.is((await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' })).status, 200)
  } finally {
    await t.stop()
  }
})

test.run()
