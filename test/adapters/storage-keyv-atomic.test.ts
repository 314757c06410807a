import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Keyv, { type Deserialize, type Serialize } from 'keyv'
import KeyvRedis from '@keyv/redis'
import { KeyvSqlite } from '@keyv/sqlite'
import { KeyvPostgres } from '@keyv/postgres'
import { suite } from 'uvu'
import { keyvStorage, storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { requireAtomic, type Storage } from '../../src/ports/storage.ts'
import { needing, POSTGRES, REDIS } from '../helpers/requires.ts'

const dir = mkdtempSync(join(tmpdir(), 'zapgate-atomic-'))
process.on('exit', () => rmSync(dir, { recursive: true, force: true }))
const namespace = `zapgate-test-${randomBytes(4).toString('hex')}`
const JSON_TEXT = { serialize: JSON.stringify as Serialize, deserialize: JSON.parse as Deserialize }

const steps = suite('storage-keyv atomic steps')

steps('entries written by the atomic steps are read by a plain Keyv on the same SQLite file', async () => {
  const path = join(dir, 'plain.sqlite')
  const storage = requireAtomic(await storageFromUrl(`sqlite://${path}`), 'test')
  const plain = new Keyv(new KeyvSqlite(`sqlite://${path}`), { namespace: 'zapgate', ...JSON_TEXT })
  await readByPlainKeyv(storage, plain)
})

steps('get(key) removes an expired entry only while it is still the expired one (never a claim added in its place)', async () => {
  const map = new InterleavingMap()
  const storage = requireAtomic(keyvStorage(new Keyv({ store: map, useKeyPrefix: false, ...JSON_TEXT })), 'test')
  await storage.set('lease', { owner: 'old' }, 20)
  await sleep(60)
  // Another process adds a fresh claim between this get's read and its clean-up.
  map.afterNextGet = () => map.set('lease', JSON.stringify({ value: { owner: 'new' } }))
  assert.equal(await storage.get('lease'), undefined)
  assert.deepEqual(await storage.get('lease'), { owner: 'new' })
  // Without an interleaving write, the expired entry is cleaned up.
  await storage.set('other', 1, 20)
  await sleep(60)
  assert.equal(await storage.get('other'), undefined)
  assert.equal(map.has('other'), false)
})

steps('a second SQLite connection that has to wait for the write lock waits (busy timeout) instead of failing', async () => {
  const url = `sqlite://${join(dir, 'busy.sqlite')}`
  const a = requireAtomic(await storageFromUrl(url), 'test')
  const b = requireAtomic(await storageFromUrl(url), 'test')
  try {
    const counts = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).increment('n', 1)))
    assert.equal(Math.max(...counts), 200)
    assert.equal(await a.get('n'), 200)
  } finally {
    await Promise.all([a.close!(), b.close!()])
  }
})

steps('concurrent deletes of one key over two SQLite connections: exactly one resolves true', async () => {
  const url = `sqlite://${join(dir, 'deletes.sqlite')}`
  await deletesRace(await storageFromUrl(url), await storageFromUrl(url))
})

steps('increment on SQLite by a safe integer outside 32 bits keeps the counter an integer that later increments raise', async () => {
  const storage = requireAtomic(await storageFromUrl(`sqlite://${join(dir, 'wide.sqlite')}`), 'test')
  try {
    assert.equal(await storage.increment('n', 1), 1)
    assert.equal(await storage.increment('n', 2 ** 31), 2 ** 31 + 1)
    assert.equal(await storage.increment('n', 1), 2 ** 31 + 2)
    assert.equal(await storage.increment('n', -(2 ** 40)), 2 ** 31 + 2 - 2 ** 40)
    assert.equal(await storage.increment('n', 1), 2 ** 31 + 3 - 2 ** 40)
  } finally {
    await storage.close!()
  }
})

steps('an expired entry never read again is swept from the SQLite file and from the memory Map (which keep it until read)', async () => {
  const path = join(dir, 'sweep.sqlite')
  const sqlite = await storageFromUrl(`sqlite://${path}`, { sweepIntervalMs: 50 })
  const rows = new KeyvSqlite(`sqlite://${path}`)
  const map = new Map<string, unknown>()
  const memory = keyvStorage(new Keyv({ store: map, useKeyPrefix: false, ...JSON_TEXT }), { sweepIntervalMs: 50 })
  try {
    for (const storage of [sqlite, memory]) await Promise.all([storage.set('msg:1', 'soon gone', 20), storage.set('kept', 'for ever')])
    await sleep(400)
    assert.deepEqual(
      (await rows.query('SELECT key FROM keyv')).map((row: { key: string }) => row.key),
      ['zapgate:kept'],
    )
    assert.deepEqual([...map.keys()], ['kept'])
  } finally {
    await Promise.all([sqlite.close!(), memory.close!(), rows.disconnect()])
  }
})

steps.run()

{
  const redisSuite = suite('storage-keyv atomic steps on redis')
  const redis = needing(redisSuite, REDIS, 'storage-keyv atomic steps on redis')
  const redisUrl = REDIS.value!

  redis('an entry Keyv holds expired while Redis still keeps it (clocks apart) counts as absent for add and increment', async () => {
    const storage = await atomicAt(redisUrl)
    const raw = new KeyvRedis(redisUrl, { namespace })
    try {
      const expired = (value: unknown) => JSON.stringify({ value, expires: Date.now() - 1000 })
      await raw.set('claim', expired({ owner: 'gone' }))
      await raw.set('count', expired(41))
      assert.equal(await storage.add('claim', { owner: 'me' }), true)
      assert.deepEqual(await storage.get('claim'), { owner: 'me' })
      assert.equal(await storage.increment('count', 1), 1)
    } finally {
      for (const key of ['claim', 'count']) await storage.delete(key)
      await Promise.all([storage.close!(), raw.disconnect()])
    }
  })

  redis('entries written by the atomic steps are read by a plain Keyv on the same Redis', async () => {
    await readByPlainKeyv(await atomicAt(redisUrl), new Keyv(new KeyvRedis(redisUrl, { namespace }), { namespace, useKeyPrefix: false, ...JSON_TEXT }))
  })

  redisSuite.run()
}

{
  const postgresSuite = suite('storage-keyv atomic steps on postgres')
  const postgres = needing(postgresSuite, POSTGRES, 'storage-keyv atomic steps on postgres')
  const postgresUrl = POSTGRES.value!

  postgres('entries written by the atomic steps (the counter rewritten by PostgreSQL itself) are read by a plain Keyv', async () => {
    await readByPlainKeyv(await atomicAt(postgresUrl), new Keyv(new KeyvPostgres({ uri: postgresUrl }), { namespace, ...JSON_TEXT }))
  })

  postgres('two PostgreSQL storages in one process each have their own pool: closing one leaves the other working', async () => {
    const a = await storageFromUrl(postgresUrl, { namespace })
    const b = await storageFromUrl(postgresUrl, { namespace })
    await a.set('pool-check', 1)
    await a.close!()
    assert.equal(await b.get('pool-check'), 1)
    await b.delete('pool-check')
    await b.close!()
  })

  postgres('concurrent deletes of one key over two pools: exactly one resolves true (a removal the schedule quota counts once)', async () => {
    await deletesRace(await storageFromUrl(postgresUrl, { namespace }), await storageFromUrl(postgresUrl, { namespace }))
  })

  postgres('an expired entry never read again is swept from the table (PostgreSQL keeps it until read)', async () => {
    const storage = await storageFromUrl(postgresUrl, { namespace, sweepIntervalMs: 50 })
    const client = new (createRequire(import.meta.url)('pg').Client)({ connectionString: postgresUrl })
    await client.connect()
    try {
      await Promise.all([storage.set('swept:1', 'soon gone', 20), storage.set('swept:kept', 'for ever')])
      await sleep(400)
      const { rows } = await client.query('SELECT key FROM keyv WHERE key LIKE $1', [`${namespace}:swept:%`])
      assert.deepEqual(
        rows.map((row: { key: string }) => row.key),
        [`${namespace}:swept:kept`],
      )
    } finally {
      await storage.delete('swept:kept')
      await Promise.all([storage.close!(), client.end()])
    }
  })

  postgresSuite.run()
}

// --- Internal helpers ---

/** A storage with atomic steps on the server at `url`, under this run's namespace. */
async function atomicAt(url: string): Promise<ReturnType<typeof requireAtomic>> {
  return requireAtomic(await storageFromUrl(url, { namespace }), 'test')
}

/**
 * Write one entry per atomic step through `storage` (`windowed` has a ttl that must still hold) and
 * read each back through `plain`, a Keyv on the same store; then delete the entries and close both.
 */
async function readByPlainKeyv(storage: ReturnType<typeof requireAtomic>, plain: Keyv): Promise<void> {
  try {
    assert.equal(await storage.add('added', { name: 'olá 🚀', list: [1, null] }), true)
    assert.equal(await storage.compareAndSet('swapped', undefined, { v: 1 }), true)
    assert.equal(await storage.compareAndSet('swapped', { v: 1 }, { v: 2 }), true)
    await storage.increment('counted', 2)
    await storage.increment('counted', 3)
    await storage.increment('windowed', 1, 60_000)
    await storage.increment('windowed', 1, 60_000)
    assert.deepEqual(await plain.get('added'), { name: 'olá 🚀', list: [1, null] })
    assert.deepEqual(await plain.get('swapped'), { v: 2 })
    assert.equal(await plain.get('counted'), 5)
    assert.equal(await plain.get('windowed'), 2)
  } finally {
    for (const key of ['added', 'swapped', 'counted', 'windowed']) await storage.delete(key)
    await Promise.all([storage.close!(), plain.disconnect()])
  }
}

/** 20 rounds of 10 concurrent deletes of one key, split over `a` and `b`: each round, exactly one of them removed it. */
async function deletesRace(a: Storage, b: Storage): Promise<void> {
  try {
    for (let round = 0; round < 20; round++) {
      await a.set('deleted', { round })
      const removed = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).delete('deleted')))
      assert.equal(removed.filter(Boolean).length, 1, `round ${round}: ${removed.filter(Boolean).length} deletes resolved true`)
    }
  } finally {
    await a.delete('deleted')
    await Promise.all([a.close!(), b.close!()])
  }
}

/** A Map that runs `afterNextGet` once, right after a get: another process writing in between two steps. */
class InterleavingMap extends Map<string, unknown> {
  afterNextGet?: () => void
  override get(key: string): unknown {
    const value = super.get(key)
    const then = this.afterNextGet
    this.afterNextGet = undefined
    then?.()
    return value
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, ms))
}
