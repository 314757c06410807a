import assert from 'node:assert/strict'
import { inspect } from 'node:util'
import { suite } from 'uvu'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'

/** What storageFromUrl throws is logged by hosts: it must hold no store password, in its message, its causes or their fields. */
const secrets = suite('storageFromUrl: no password in its errors')

secrets('a store URL the driver cannot parse: the password is in no part of the error (its causes and their fields included)', async () => {
  // Before: the Redis client's `new URL` threw a TypeError whose `input` field held the whole URL, password and all,
  // thrown as is (and PostgreSQL's kept as the cause): a host logging the error (pino's err serializer, console.error) printed it.
  for (const url of ['redis://u:hunter2@127.0.0.1:notaport', 'postgres://u:hunter2@127.0.0.1:notaport/db']) {
    await assert.rejects(storageFromUrl(url, { pingTimeoutMs: 3000 }), (error: Error) => {
      assert.doesNotMatch(inspect(error, { depth: 10 }), /hunter2/, url)
      assert.doesNotMatch(JSON.stringify({ ...error, message: error.message, stack: error.stack }), /hunter2/, url)
      return true
    })
  }
})

secrets.run()
