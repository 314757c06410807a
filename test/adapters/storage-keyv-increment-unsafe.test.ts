import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { sharedBackends } from '../helpers/shared-backends.ts'
import { needing } from '../helpers/requires.ts'

/**
 * The port: increment "Rejects, changing nothing, when the stored value is not a safe integer". The
 * memory Map and Redis keep such a value as it is; SQLite and PostgreSQL added `by` to it in SQL
 * (an integer column of 64 bits, a numeric) and only then did the JavaScript side reject: the
 * caller was told the step failed, and the stored value had changed anyway.
 */
const test = suite('storage-keyv: increment of a stored integer past 2^53 changes nothing')

for (const backend of sharedBackends()) {
  needing(
    test,
    backend.service,
    `the unsafe-integer increment test on ${backend.name}`,
  )(`${backend.name}: increment of 2^53 + 2 rejects and leaves it`, async () => {
    const { a, close } = await backend.open()
    try {
      await a.set('counter', 2 ** 53 + 2)
      await assert.rejects(a.increment!('counter', 1), /not an integer/)
      assert.equal(await a.get('counter'), 2 ** 53 + 2, 'the stored value changed although the increment was refused')
    } finally {
      await a.delete('counter').catch(() => {})
      await close()
    }
  })
}

test.run()
