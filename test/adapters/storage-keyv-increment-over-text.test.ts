import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { sharedBackends } from '../helpers/shared-backends.ts'
import { needing } from '../helpers/requires.ts'

/**
 * The port: an expired entry is absent, and `increment` of an absent key starts at `by`; a live value
 * that is not a safe integer makes it reject, changing nothing. PostgreSQL's increment read the entry
 * as jsonb, which refuses a JSON text holding an escaped NUL ("\u0000", a value the port takes as any
 * string): increment of such an entry, live or expired, rejected with "unsupported Unicode escape
 * sequence"; a lone surrogate, "\ud800", with "invalid input syntax for type json"), and an expired one was never replaced.
 * Redis's increment script decoded the entry with cjson, which refuses a lone surrogate's escape: a live one was
 * refused with "invalid unicode escape code" (not the port's "not an integer"), and one expired by the reader's
 * clock (Keyv's rule) but still kept by Redis was never replaced.
 */
const test = suite('storage-keyv: increment over a stored text holding a NUL or a lone surrogate')

for (const backend of sharedBackends()) {
  needing(
    test,
    backend.service,
    `the increment-over-text test on ${backend.name}`,
  )(`${backend.name}: an expired one starts the counter again, a live one is refused, unchanged`, async () => {
    const { a, close } = await backend.open()
    try {
      for (const text of ['a\u0000b', 'a\uD800b']) {
        await a.set('old', text, 50)
        await new Promise(resolve => setTimeout(resolve, 200))
        assert.equal(await a.increment!('old', 2), 2, `an expired entry is absent: the counter starts at by (${JSON.stringify(text)})`)
        assert.equal(await a.get('old'), 2)
        await a.set('live', text)
        await assert.rejects(a.increment!('live', 1), /not an integer/, `the port's refusal (${JSON.stringify(text)})`)
        assert.equal(await a.get('live'), text, 'a refused increment changes nothing')
      }
    } finally {
      for (const key of ['old', 'live']) await a.delete(key).catch(() => {})
      await close()
    }
  })

  needing(
    test,
    backend.service,
    `the increment-over-text test on ${backend.name}`,
  )(`${backend.name}: one expired by the reader's clock, still in the store, starts the counter again`, async () => {
    const { a, close } = await backend.open()
    const realNow = Date.now
    try {
      for (const text of ['a\u0000b', 'a\uD800b', 'plain']) {
        await a.set('skewed', text, 60_000)
        // A reader whose clock is two minutes ahead of the writer's: the entry has expired by Keyv's rule (Redis still keeps the key).
        Date.now = () => realNow() + 120_000
        try {
          assert.equal(await a.increment!('skewed', 2), 2, `an expired entry is absent: the counter starts at by (${JSON.stringify(text)})`)
        } finally {
          Date.now = realNow
        }
        assert.equal(await a.get('skewed'), 2)
      }
    } finally {
      Date.now = realNow
      await a.delete('skewed').catch(() => {})
      await close()
    }
  })
}

test.run()
