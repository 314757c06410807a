import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { sharedBackends } from '../helpers/shared-backends.ts'
import { needing } from '../helpers/requires.ts'

/**
 * A key is a JavaScript string, and may hold a lone surrogate (a message id decoded from crafted
 * bytes: protobufjs's utf8 reader turns ED A0 80 into U+D800). SQLite, Redis and PostgreSQL get the
 * key as UTF-8, where every lone surrogate becomes U+FFFD: `x\uD800` and `x\uD801` were one record.
 * An `add` of the second answered false (a claim lost to a key nobody claimed), `get` gave the
 * other key's value, and `list` found one entry under a key the caller never wrote. The memory store keeps them
 * apart: every store must (or refuse such a key), as the port's atomic steps are per key.
 */
const test = suite('storage-keyv: keys with lone surrogates stay distinct keys')

for (const backend of sharedBackends()) {
  needing(
    test,
    backend.service,
    `the ill-formed key test on ${backend.name}`,
  )(`${backend.name}: add of "m\\uD800" and "m\\uD801" both win, each key reads its own value, a listing finds both`, async () => {
    const { a, b, close } = await backend.open()
    const [first, second] = [`flow-taken:dev:m\uD800`, `flow-taken:dev:m\uD801`]
    try {
      let firstAdded: unknown
      try {
        firstAdded = await a.add!(first, 'agent-1', 60_000)
      } catch (err) {
        // Refusing an ill-formed key loudly is an acceptable answer too; a silent collision is not.
        assert.match(String((err as Error).message), /well-formed|surrogate/i)
        await assert.rejects(b.add!(second, 'agent-2', 60_000), /well-formed|surrogate/i)
        return
      }
      assert.equal(firstAdded, true)
      assert.equal(await b.add!(second, 'agent-2', 60_000), true, 'a different key was never claimed: its add must win')
      assert.equal(await a.get(first), 'agent-1')
      assert.equal(await b.get(second), 'agent-2')
      // A listing finds both, each under a key that reads (and so deletes) its own record (as a long key's, on PostgreSQL).
      const listed: Array<[string, unknown]> = []
      for await (const entry of a.list('flow-taken:dev:')) listed.push(entry)
      assert.deepEqual(listed.map(([, value]) => value).sort(), ['agent-1', 'agent-2'])
      for (const [key, value] of listed) assert.equal(await b.get(key), value, JSON.stringify(key))
    } finally {
      await a.delete(first).catch(() => {})
      await a.delete(second).catch(() => {})
      await close()
    }
  })
}

test.run()
