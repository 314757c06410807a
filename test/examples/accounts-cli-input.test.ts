import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { join } from 'node:path'
import { accounts, registration } from '../helpers/accounts-cli.ts'
import { post } from '../helpers/http.ts'
import { startStandalone, tempDir } from '../helpers/standalone.ts'

/** examples/accounts.ts given the environment `npm start` takes, or a wrong one. */
const test = suite('npm run accounts: the environment of npm start, and bad values of it')

test('a GATEWAY_TIME_ZONE npm start accepts (with the blank an .env line leaves) is accepted by the command too', async () => {
  const env = { GATEWAY_STORE: `sqlite://${join(tempDir(), 'gateway.sqlite')}`, GATEWAY_RATE_LIMIT: 'off', GATEWAY_TIME_ZONE: 'America/Sao_Paulo ' }
  const server = await startStandalone(env)
  try {
    assert.is((await post(`${server.url}/api/auth`, registration)).status, 200)
  } finally {
    await server.kill('SIGKILL')
  }
  const shown = await accounts(env, 'show', 'ana@example.com')
  assert.is(shown.code, 0, shown.err)
  assert.is(JSON.parse(shown.out).email, 'ana@example.com')
})

test('a wrong GATEWAY_TIME_ZONE, GATEWAY_STORE or GATEWAY_STORE_NAMESPACE: exit 1 with one line naming the variable, no stack trace', async () => {
  const store = `sqlite://${join(tempDir(), 'gateway.sqlite')}`
  const cases: [Record<string, string>, RegExp][] = [
    [{ GATEWAY_STORE: store, GATEWAY_TIME_ZONE: 'Mars/Olympus' }, /GATEWAY_TIME_ZONE/],
    [{ GATEWAY_STORE: 'foo://bar' }, /GATEWAY_STORE/],
    [{ GATEWAY_STORE: store, GATEWAY_STORE_NAMESPACE: 'a:b' }, /GATEWAY_STORE_NAMESPACE/],
  ]
  for (const [env, names] of cases) {
    const answer = await accounts(env, 'show', 'ana@example.com')
    const what = JSON.stringify(env)
    assert.is(answer.code, 1, what)
    assert.match(answer.err, names, what)
    assert.not.match(answer.err, /^\s+at /m, `${what}: no stack trace\n${answer.err}`)
    assert.is(answer.err.trim().split('\n').length, 1, `${what}: one line\n${answer.err}`)
  }
})

test.run()
