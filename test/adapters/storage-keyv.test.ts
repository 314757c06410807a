import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Keyv, { type Deserialize, type Serialize } from 'keyv'
import { suite } from 'uvu'
import { keyvStorage, storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { storageContract } from '../../src/testing/storage-contract.ts'
import { needing, POSTGRES, REDIS } from '../helpers/requires.ts'

const dir = mkdtempSync(join(tmpdir(), 'zapgate-storage-'))
process.on('exit', () => rmSync(dir, { recursive: true, force: true }))

// A namespace of this run's own, so parallel runs on one Redis or database never meet.
const namespace = `zapgate-test-${randomBytes(4).toString('hex')}`

const memory = suite('storage-keyv: memory contract')
{
  // Two Storage objects over one Map: the memory store's "second connection".
  const maps = new WeakMap<object, Map<string, unknown>>()
  const overMap = (map: Map<string, unknown>) => {
    const storage = keyvStorage(new Keyv({ store: map, useKeyPrefix: false, ...JSON_TEXT }))
    maps.set(storage, map)
    return storage
  }
  storageContract(memory, async () => overMap(new Map()), { connectAgain: async first => overMap(maps.get(first)!) })
}
memory.run()

const ownSerializer = suite('storage-keyv: memory contract with a serialiser of its own (no native counter)')
{
  const maps = new WeakMap<object, Map<string, unknown>>()
  const overMap = (map: Map<string, unknown>) => {
    const storage = keyvStorage(
      new Keyv({ store: map, namespace: 'ns', serialize: data => JSON.stringify(data, null, 1), deserialize: JSON.parse as Deserialize }),
    )
    maps.set(storage, map)
    return storage
  }
  storageContract(ownSerializer, async () => overMap(new Map()), { connectAgain: async first => overMap(maps.get(first)!) })
}
ownSerializer.run()

const generic = suite("storage-keyv: contract over Keyv's own iterator (a store without a prefix scan, so no atomic steps)")
storageContract(generic, async () => keyvStorage(new Keyv({ store: new IterableStore(), namespace: 'ns' })), { atomic: false })
generic.run()

const sqlite = suite('storage-keyv: sqlite contract (two connections to one file for the races)')
{
  const url = `sqlite://${join(dir, 'contract.sqlite')}`
  storageContract(sqlite, () => storageFromUrl(url), { connectAgain: () => storageFromUrl(url) })
}
sqlite.run()

for (const [name, service] of [
  ['redis', REDIS],
  ['postgres', POSTGRES],
] as const) {
  const remote = suite(`storage-keyv: ${name} contract (two connections for the races)`)
  const url = service.value!
  storageContract(needing(remote, service, `the ${name} contract`), () => storageFromUrl(url, { namespace }), {
    connectAgain: () => storageFromUrl(url, { namespace }),
  })
  remote.run()
}

const keyv = suite('keyvStorage')

keyv('turns a failing Keyv store into thrown errors with the original as cause', async () => {
  const broken = new Error('disk on fire')
  const store = Object.assign(new Map(), {
    get: async () => Promise.reject(broken),
    set: async () => Promise.reject(broken),
    delete: async () => Promise.reject(broken),
  })
  const storage = keyvStorage(new Keyv({ store }))
  for (const operation of [() => storage.get('a'), () => storage.set('a', 1), () => storage.delete('a'), () => storage.ping!()]) {
    await assert.rejects(operation(), (error: Error) => error.cause === broken && /disk on fire/.test(error.message))
  }
})

keyv('throws when the Keyv store reports a failed set with false', async () => {
  const store = Object.assign(new Map(), { set: async () => false })
  await assert.rejects(keyvStorage(new Keyv({ store })).set('a', 1), /Storage set\("a"\) failed/)
})

keyv('rejects a ttlMs that is not a positive number', async () => {
  const storage = keyvStorage()
  for (const ttlMs of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) await assert.rejects(storage.set('a', 1, ttlMs), RangeError)
})

keyv('keeps the keys of a namespaced Keyv apart from keys that look namespaced', async () => {
  const storage = keyvStorage(new Keyv({ namespace: 'ns' }))
  await storage.set('x', 'plain')
  await storage.set('ns:x', 'looks namespaced')
  assert.equal(await storage.get('x'), 'plain')
  assert.equal(await storage.get('ns:x'), 'looks namespaced')
  const listed: string[] = []
  for await (const [key] of storage.list('')) listed.push(key)
  assert.deepEqual(listed.sort(), ['ns:x', 'x'])
})

keyv('list(prefix) throws when the store iterator reports its failure only as an error event', async () => {
  const store = new IterableStore()
  const storage = keyvStorage(new Keyv({ store }))
  await storage.set('a', 1)
  store.failIteration = true
  await assert.rejects(
    (async () => {
      for await (const entry of storage.list('')) void entry
    })(),
    (error: Error) => /Storage list\(""\) failed: cursor lost/.test(error.message) && (error.cause as Error).message === 'cursor lost',
  )
})

keyv.run()

// --- Internal helpers ---

/** Plain JSON, as storageFromUrl's stores use. */
const JSON_TEXT = { serialize: JSON.stringify as Serialize, deserialize: JSON.parse as Deserialize }

/** A Keyv store adapter of a dialect Keyv can iterate but the adapter has no prefix scan for. */
class IterableStore extends EventEmitter {
  readonly opts = { dialect: 'mongo' }
  namespace?: string
  failIteration = false
  private readonly data = new Map<string, string>()
  async get(key: string) {
    return this.data.get(key)
  }
  async set(key: string, value: string) {
    this.data.set(key, value)
  }
  async delete(key: string) {
    return this.data.delete(key)
  }
  async clear() {
    this.data.clear()
  }
  async *iterator(namespace?: string) {
    if (this.failIteration) return void this.emit('error', new Error('cursor lost'))
    for (const [key, value] of this.data) if (!namespace || key.startsWith(`${namespace}:`)) yield [key, value]
  }
}
