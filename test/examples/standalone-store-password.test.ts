import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { startStandalone } from '../helpers/standalone.ts'

const test = suite('standalone server: the store password stays out of the start-up log')

const postgres = process.env.POSTGRES_URL

test('a GATEWAY_STORE password holding an @ (which URLs allow: the last @ ends it) is not printed in part at start', async () => {
  if (!postgres) return console.log('  (skipped: POSTGRES_URL is not set)')
  const url = new URL(postgres)
  const password = 'first-part@second-part-7c2e'
  // Written by hand, as an operator pastes it: the password's @ not percent-encoded.
  const store = `${url.protocol}//${decodeURIComponent(url.username) || 'postgres'}:${password}@${url.host}${url.pathname}`
  const server = await startStandalone({ GATEWAY_STORE: store, GATEWAY_STORE_NAMESPACE: `pw${process.pid}` })
  try {
    const output = server.output()
    assert.match(output, /"store":"postgres(ql)?:\/\//, output)
    for (const part of password.split('@')) assert.ok(!output.includes(part), `"${part}" of the store password is in the start-up log:\n${output}`)
  } finally {
    await server.kill()
  }
})

test('a store that cannot be opened is named in its error without any part of such a password', async () => {
  const password = 'first-part@second-part-7c2e'
  for (const store of [`postgres://user:${password}@127.0.0.1:1/db`, `redis://:${password}@127.0.0.1:1`]) {
    const error = await storageFromUrl(store, { pingTimeoutMs: 500 }).then(
      () => assert.fail('opened'),
      (err: Error) => err,
    )
    assert.match(error.message, /Cannot open the store at/, error.message)
    for (const part of password.split('@')) assert.ok(!error.message.includes(part), `"${part}" is in the error: ${error.message}`)
  }
})

test.run()
