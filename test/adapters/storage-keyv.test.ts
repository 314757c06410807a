import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import net from 'node:net'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Keyv, { type Deserialize, type Serialize } from 'keyv'
import { suite } from 'uvu'
import { keyvStorage, missingPackageError, storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { storageContract } from '../../src/testing/storage-contract.ts'

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
    const storage = keyvStorage(new Keyv({ store: map, namespace: 'ns', serialize: data => JSON.stringify(data, null, 1), deserialize: JSON.parse as Deserialize }))
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

for (const [name, variable] of [['redis', 'REDIS_URL'], ['postgres', 'POSTGRES_URL']] as const) {
  const url = process.env[variable]
  if (!url) {
    console.log(`skipped: ${name} contract (${variable} not set)`)
    continue
  }
  const remote = suite(`storage-keyv: ${name} contract (two connections for the races)`)
  storageContract(remote, () => storageFromUrl(url, { namespace }), { connectAgain: () => storageFromUrl(url, { namespace }) })
  remote.run()
}

const redisUrl = process.env.REDIS_URL
if (redisUrl) {
  const outage = suite('storage-keyv: redis outage')

  outage('fails fast while Redis is unreachable, recovers when it is back, and closes without hanging', async () => {
    const target = new URL(redisUrl)
    const proxy = new TcpProxy(target.hostname, Number(target.port || 6379))
    const port = await proxy.start()
    const storage = await storageFromUrl(Object.assign(new URL(redisUrl), { host: `127.0.0.1:${port}` }).href, { pingTimeoutMs: 1000 })
    const key = `outage-${process.pid}-${Date.now()}`
    try {
      await storage.set(key, 'kept')
      await proxy.stop()
      await assert.rejects(storage.ping!(), /Storage ping/)
      await assert.rejects(storage.get(key), /Storage get/)
      await assert.rejects(storage.add!(`${key}-claim`, 'mine'), /Storage add/)
      await assert.rejects(storage.compareAndSet!(key, 'kept', 'changed'), /Storage compareAndSet/)
      await proxy.start(port)
      await eventually(() => storage.ping!())
      assert.equal(await storage.get(key), 'kept')
      assert.equal(await storage.add!(`${key}-claim`, 'mine', 60_000), true)
      await storage.delete(`${key}-claim`)
      await storage.delete(key)
      await proxy.stop()
    } finally {
      await storage.close!()
      await proxy.stop()
    }
  })

  outage.run()
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

const fromUrl = suite('storageFromUrl')

fromUrl('opens an in-memory storage for memory:// and for an empty URL', async () => {
  for (const url of ['memory://', '']) {
    const storage = await storageFromUrl(url)
    await storage.set('a', { ok: true })
    assert.deepEqual(await storage.get('a'), { ok: true })
    await storage.close!()
  }
})

fromUrl('rejects an unknown scheme with a clear error', async () => {
  await assert.rejects(storageFromUrl('mongodb://user:secret@localhost/db'), (error: Error) => {
    assert.match(error.message, /Unsupported store URL scheme "mongodb:"/)
    assert.match(error.message, /sqlite:\/\//)
    assert.doesNotMatch(error.message, /secret/)
    return true
  })
  await assert.rejects(storageFromUrl('not a url'), /Invalid store URL/)
  await assert.rejects(storageFromUrl('sqlite://'), /sqlite:\/\/<file path>/)
})

fromUrl('creates the parent directories of a sqlite file', async () => {
  const path = join(dir, 'nested', 'deeper', 'store.sqlite')
  const storage = await storageFromUrl(`sqlite://${path}`)
  await storage.set('a', 1)
  assert.ok(existsSync(path))
  assert.ok(existsSync(`${path}-wal`), 'the database is in WAL mode')
  await storage.close!()
})

fromUrl('accepts a relative sqlite path', async () => {
  const cwd = process.cwd()
  process.chdir(dir)
  try {
    const storage = await storageFromUrl('sqlite://./relative/store.sqlite')
    await storage.set('a', 1)
    await storage.close!()
    assert.ok(existsSync(join(dir, 'relative', 'store.sqlite')))
  } finally {
    process.chdir(cwd)
  }
})

fromUrl('keeps data across a close and reopen of the same sqlite file', async () => {
  const url = `sqlite://${join(dir, 'persist.sqlite')}`
  const first = await storageFromUrl(url)
  await first.set('accounts:1', { email: 'a@example.com' })
  await first.set('otp:1', '123456', 60_000)
  await first.close!()
  const second = await storageFromUrl(url)
  assert.deepEqual(await second.get('accounts:1'), { email: 'a@example.com' })
  assert.equal(await second.get('otp:1'), '123456')
  await second.close!()
})

fromUrl('keeps namespaces apart in one sqlite file', async () => {
  const url = `sqlite://${join(dir, 'shared.sqlite')}`
  const a = await storageFromUrl(url, { namespace: 'a' })
  const b = await storageFromUrl(url, { namespace: 'b' })
  await a.set('k', 'from a')
  assert.equal(await b.get('k'), undefined)
  const listed: string[] = []
  for await (const [key] of b.list('')) listed.push(key)
  assert.deepEqual(listed, [])
  await Promise.all([a.close!(), b.close!()])
})

fromUrl('fails when the sqlite parent directory cannot be created', async () => {
  const file = join(dir, 'a-file')
  const storage = await storageFromUrl(`sqlite://${file}`)
  await storage.close!()
  await assert.rejects(storageFromUrl(`sqlite://${file}/inside/store.sqlite`), /EEXIST|ENOTDIR|Cannot open the store/)
})

fromUrl('fails at once, naming the store, when SQLite cannot open the file', async () => {
  await assert.rejects(storageFromUrl(`sqlite://${dir}`), (error: Error) => {
    assert.match(error.message, /Cannot open the store at sqlite:\/\/.*SQLITE_CANTOPEN/)
    assert.ok(error.cause instanceof Error)
    return true
  })
})

fromUrl('fails at once when Redis is unreachable', async () => {
  await assert.rejects(storageFromUrl('redis://127.0.0.1:1', { pingTimeoutMs: 3000 }), /Cannot open the store at redis:\/\/127\.0\.0\.1:1/)
})

fromUrl('fails at once when PostgreSQL is unreachable, without leaking the password', async () => {
  await assert.rejects(storageFromUrl('postgres://u:hunter2@127.0.0.1:1/db', { pingTimeoutMs: 3000 }), (error: Error) => {
    assert.match(error.message, /Cannot open the store at postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/db/)
    assert.doesNotMatch(error.message, /hunter2/)
    return true
  })
})

fromUrl('names the package to install when a store driver is missing', () => {
  const cause = Object.assign(new Error("Cannot find package '@keyv/sqlite'"), { code: 'ERR_MODULE_NOT_FOUND' })
  const error = missingPackageError('sqlite', '@keyv/sqlite', cause)
  assert.equal(error.message, 'GATEWAY_STORE=sqlite://… needs the optional package @keyv/sqlite: npm install @keyv/sqlite')
  assert.equal(error.cause, cause)
})

fromUrl.run()

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

/** Forwards TCP connections to a target; stop() drops every open connection (a simulated outage). */
class TcpProxy {
  private server?: net.Server
  private readonly sockets = new Set<net.Socket>()
  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}
  async start(port = 0): Promise<number> {
    const server = net.createServer(client => {
      const upstream = net.connect(this.port, this.host)
      for (const socket of [client, upstream]) {
        this.sockets.add(socket)
        socket.on('error', () => socket.destroy())
        socket.on('close', () => this.sockets.delete(socket))
      }
      client.pipe(upstream).pipe(client)
    })
    this.server = server
    await new Promise<void>(resolve => server.listen(port, '127.0.0.1', resolve))
    return (server.address() as net.AddressInfo).port
  }
  async stop(): Promise<void> {
    const server = this.server
    this.server = undefined
    for (const socket of this.sockets) socket.destroy()
    if (server) await new Promise(resolve => server.close(resolve))
  }
}

async function eventually(check: () => Promise<unknown>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      return void (await check())
    } catch (error) {
      if (Date.now() > deadline) throw error
      await new Promise(resolve => setTimeout(resolve, 50))
    }
  }
}
