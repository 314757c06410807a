import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { sharedBackends } from '../helpers/shared-backends.ts'
import { needing } from '../helpers/requires.ts'

/**
 * A key is a JavaScript string, and may hold a NUL (U+0000): a message id a sender chose, decoded from
 * a protobuf string (a 0x00 byte is valid UTF-8), ends up in keys such as an agent's `flow-taken` mark
 * or a Baileys `msg:` key. PostgreSQL refuses a NUL in text ("invalid byte sequence for encoding
 * "UTF8": 0x00"), so on it every step of such a key failed (taken by the gateway for a store failure,
 * 503), while the memory Map, SQLite and Redis keep it as any other character. Every store must.
 */
const test = suite('storage-keyv: keys holding a NUL work on every store')

for (const backend of sharedBackends()) {
  needing(
    test,
    backend.service,
    `the NUL key test on ${backend.name}`,
  )(`${backend.name}: set, get, add, compareAndSet, increment, list and delete of keys holding "\\u0000"`, async () => {
    const { a, b, close } = await backend.open()
    const prefix = 'flow-taken:dev:m\u0000'
    const [key, twin, count] = [`${prefix}x`, 'flow-taken:dev:m\uFFFDx', `${prefix}count`]
    try {
      await a.set(key, 'agent-1')
      assert.equal(await b.get(key), 'agent-1')
      assert.equal(await b.add!(twin, 'agent-2', 60_000), true, 'a look-alike key is another record')
      assert.equal(await b.add!(key, 'again', 60_000), false)
      assert.equal(await a.compareAndSet!(key, 'agent-1', 'agent-3'), true)
      assert.equal(await b.increment!(count, 2), 2)
      const listed: Array<[string, unknown]> = []
      for await (const entry of a.list(prefix)) listed.push(entry)
      assert.deepEqual(
        listed.sort(([x], [y]) => (x < y ? -1 : 1)),
        [
          [count, 2],
          [key, 'agent-3'],
        ],
      )
      const all: string[] = []
      for await (const [name] of a.list('flow-taken:dev:')) all.push(name)
      assert.deepEqual(all.sort(), [count, key, twin].sort())
      assert.equal(await b.deleteIfEqual!(key, 'agent-3'), true)
      assert.equal(await a.delete(count), true)
      assert.equal(await a.get(key), undefined)
      assert.equal(await a.get(twin), 'agent-2')
    } finally {
      for (const name of [key, twin, count]) await a.delete(name).catch(() => {})
      await close()
    }
  })
}

test.run()
