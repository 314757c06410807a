import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { sharedBackends, type SharedBackend } from '../helpers/shared-backends.ts'
import { needing } from '../helpers/requires.ts'

/**
 * PostgreSQL stores a key longer than its column (255) under its first 211 characters (namespace
 * included), `~` and a hash. A listing by a prefix reaching past those 211 characters (a prefix of
 * 204 characters or more under the default namespace `zapgate`) found none of the long keys that
 * start with it, and a prefix ending in that `~` found long keys that do not start with it; the
 * long keys it did find came back under their stored names. A listing by any prefix must yield
 * exactly the keys that start with it, each as written, on every store (a lone surrogate, which
 * every store hashes the same way, included), whichever step wrote it.
 */
const test = suite('storage-keyv: a listing by any prefix yields exactly the keys that start with it')

const stem = 'list:' + 'abcdefghij'.repeat(40) // 405 characters
const keys = [
  ...[1, 100, 190, 200, 203, 204, 205, 210, 211, 212, 220, 240, 246, 247, 248, 250, 260, 300, 405].map(n => stem.slice(0, n)),
  ...[200, 204, 211, 230, 250, 300].map(n => stem.slice(0, n) + '~' + 'z'.repeat(60)), // a `~` where a stored name has its hash
  ...[200, 209, 210, 211, 250].map(n => stem.slice(0, n) + '\u{1F600}' + 'q'.repeat(300)), // an astral character astride the cut
  stem.slice(0, 30) + '\uD800' + 'r'.repeat(10), // a lone surrogate: hashed on every store
  stem.slice(0, 30) + '\uD800' + 's'.repeat(300),
]
const prefixes = [
  ...Array.from({ length: 90 }, (_, i) => stem.slice(0, 180 + i)),
  ...[1, 100, 300, 400, 405].map(n => stem.slice(0, n)),
  ...Array.from({ length: 60 }, (_, i) => stem.slice(0, 185 + i) + '~'),
  ...[200, 209, 210, 211, 250].flatMap(n => [stem.slice(0, n) + '\uD83D', stem.slice(0, n) + '\u{1F600}', stem.slice(0, n) + '\u{1F600}qq']),
  stem.slice(0, 30) + '\uD800',
  stem.slice(0, 30) + '\uD800r',
  stem.slice(0, 30) + '\uD801',
]

/** The Keyv memory store (a Map) beside the shared backends (the test Map, SQLite, Redis, PostgreSQL). */
const keyvMemory: SharedBackend = {
  name: 'keyv memory',
  async open() {
    const a = await storageFromUrl('memory://')
    return { a, b: a, close: () => a.close!() }
  },
}

for (const backend of [...sharedBackends(), keyvMemory]) {
  needing(
    test,
    backend.service,
    `the long-prefix listing test on ${backend.name}`,
  )(`${backend.name}: keys of 1 to 605 characters, listed by prefixes of 1 to 405`, async () => {
    const { a, b, close } = await backend.open()
    try {
      // Each way of writing: set, add, compareAndSet, increment (a native counter, which rewrites the entry itself).
      for (const [i, key] of keys.entries()) {
        if (i % 4 === 0) await a.set(key, i)
        else if (i % 4 === 1) assert.equal(await a.add!(key, i, 60_000), true)
        else if (i % 4 === 2) (await a.set(key, -1), assert.equal(await a.compareAndSet!(key, -1, i), true))
        else (await a.increment!(key, i - 1), assert.equal(await a.increment!(key, 1), i))
      }
      const wrong: string[] = []
      for (const prefix of prefixes) {
        const listed = new Map<string, unknown>()
        for await (const [key, value] of b.list(prefix)) listed.set(key, value)
        const expected = new Map(keys.flatMap((key, i) => (key.startsWith(prefix) ? [[key, i] as const] : [])))
        const missed = [...expected.keys()].filter(key => listed.get(key) !== expected.get(key))
        const extra = [...listed.keys()].filter(key => !expected.has(key))
        if (missed.length + extra.length > 0) wrong.push(`prefix of ${prefix.length}: missed ${missed.map(k => k.length)}, extra ${extra.map(k => k.length)}`)
      }
      assert.deepEqual(wrong, [])
    } finally {
      for (const key of keys) await a.delete(key).catch(() => {})
      await close()
    }
  })
}

test.run()
