import { mkdir, open } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import Keyv, { type Deserialize, type Serialize } from 'keyv'
import type { Storage } from 'zapgate'
import { keyvAtomicSteps } from './atomic.ts'
import { pooledPostgres } from './postgres.ts'
import { rawStoreOf } from './raw-stores.ts'
import { redactUrl, withoutPassword } from './url-secrets.ts'
import { scanPrefix, sweepExpired } from './scan.ts'
import { warnOfEviction } from './redis-eviction.ts'
import { storedKey, checkedNamespace, setNamed, deleteLive } from './stored-key.ts'

/** Options of keyvStorage. */
export interface KeyvStorageOptions {
  /** How long ping() waits for the backing store before it throws, and close() for calls under way on Redis or PostgreSQL before it drops them (default 5000 ms). */
  pingTimeoutMs?: number
  /** How often expired entries are removed from a store without expiry of its own (memory, SQLite, PostgreSQL; default 3600000 ms = 1 h). */
  sweepIntervalMs?: number
}

/** Options of storageFromUrl. */
export interface StoreUrlOptions extends KeyvStorageOptions {
  /** Namespace of the gateway's keys in a shared Redis or SQL database (default "zapgate"; no `:`, which would let two share keys). */
  namespace?: string
  /** Extra options handed to the @keyv/* store adapter (e.g. `{ table }`, `{ busyTimeout }`). */
  adapterOptions?: Record<string, unknown>
  /** Told once at open of a store setting that puts the gateway's data at risk: a Redis that evicts keys when full (`maxmemory-policy` other than `noeviction`). */
  onWarning?: (message: string) => void
}

/**
 * Storage over a Keyv instance (default: in memory, values kept as JSON strings, so every get and
 * set copies). Keyv reports failures as `error` events and `false` returns: this switches its
 * `throwOnErrors` on (and the store's, where it has one) and turns every failure into a thrown Error
 * whose `cause` is the original.
 *
 * Over a known Keyv store (its memory Map, @keyv/sqlite, @keyv/postgres, @keyv/redis) the storage
 * has the port's atomic steps, each written with the backend's own atomic operation (see
 * raw-stores.ts); over any other store it has none, and works for one process only.
 */
export function keyvStorage(keyv: Keyv = memoryKeyv(), options: KeyvStorageOptions = {}): Storage {
  const pingTimeoutMs = options.pingTimeoutMs ?? 5000
  // Keys are handed to Keyv already namespaced: Keyv leaves a key that starts with `<namespace>:`
  // as it is, so without this a caller's `keyv:x` and `x` would be the same record.
  const base = keyv.useKeyPrefix && keyv.namespace ? `${keyv.namespace}:` : ''
  const nameOf = storedKey(keyv)
  let lastError: unknown
  const onError = (error: unknown) => (lastError = error)
  keyv.on('error', onError)
  keyv.throwOnErrors = true
  if (keyv.store && typeof keyv.store === 'object' && 'throwOnErrors' in keyv.store) keyv.store.throwOnErrors = true
  let closing: Promise<void> | undefined
  const raw = rawStoreOf(keyv)
  const steps = raw && keyvAtomicSteps(keyv, raw, nameOf)
  // A store without expiry of its own keeps an expired entry until it is read: swept now and then instead.
  const sweeps = steps && sweepExpired(keyv, steps, base, options.sweepIntervalMs ?? 3_600_000)

  const storage: Storage = {
    get<T>(key: string): Promise<T | undefined> {
      return attempt('get', key, () => (steps ? (steps.get(base + key) as Promise<T | undefined>) : keyv.get<T>(nameOf(base + key))))
    },
    async set(key, value, ttlMs) {
      const ttl = ttlOf('set', key, ttlMs)
      const errorBefore = lastError
      const ok = await attempt('set', key, () => setNamed(keyv, nameOf, base + key, value, ttl))
      if (!ok) throw failure('set', key, lastError !== errorBefore ? lastError : new Error('the Keyv store returned false'))
    },
    delete: key => attempt('delete', key, () => (steps ? steps.remove(base + key) : deleteLive(keyv, nameOf(base + key)))),
    async *list<T>(prefix: string): AsyncIterable<[string, T]> {
      try {
        for await (const [key, value] of scanPrefix(keyv, base + prefix)) yield [key.slice(base.length), value as T]
      } catch (error) {
        throw failure('list', prefix, error)
      }
    },
    async ping() {
      await attempt('ping', PING_KEY, () => withTimeout(keyv.get(base + PING_KEY), pingTimeoutMs))
    },
    close() {
      closing ??= (async () => {
        try {
          await sweeps?.stop()
          // A Redis client that is reconnecting, or waits for replies of a server that stopped answering, would wait for ever
          // to close: drop it instead. Replies come in order, so a ping answered in time means none is left to wait for.
          const store = keyv.store
          if (store?.opts?.dialect !== 'redis') await keyv.disconnect()
          else if (store.client?.isReady === false) await store.disconnect(true)
          else
            await withTimeout(keyv.get(base + PING_KEY), pingTimeoutMs).then(
              () => keyv.disconnect(),
              () => store.disconnect(true),
            )
        } finally {
          keyv.off('error', onError)
        }
      })()
      return closing
    },
  }
  if (steps) {
    // Arguments are checked before the store is asked, so a caller's mistake throws as itself.
    storage.add = async (key, value, ttlMs) => {
      const ttl = ttlOf('add', key, ttlMs)
      return attempt('add', key, () => steps.add(base + key, value, ttl))
    }
    storage.compareAndSet = async (key, expected, next, ttlMs) => {
      const ttl = ttlOf('compareAndSet', key, ttlMs)
      if (next === undefined) throw new TypeError(`Storage compareAndSet(${JSON.stringify(key)}): next must not be undefined (deleteIfEqual removes a key)`)
      return attempt('compareAndSet', key, () => steps.compareAndSet(base + key, expected, next, ttl))
    }
    storage.deleteIfEqual = async (key, expected) => {
      if (expected === undefined) throw new TypeError(`Storage deleteIfEqual(${JSON.stringify(key)}): expected must not be undefined`)
      return attempt('deleteIfEqual', key, () => steps.deleteIfEqual(base + key, expected))
    }
    storage.increment = async (key, by, ttlMs) => {
      const ttl = ttlOf('increment', key, ttlMs)
      if (!Number.isSafeInteger(by)) throw new TypeError(`Storage increment(${JSON.stringify(key)}): by must be a safe integer, got ${by}`)
      return attempt('increment', key, () => steps.increment(base + key, by, ttl))
    }
  }
  return storage
}

/**
 * A Storage for a store URL: `memory://` (or empty), `sqlite://path` (relative or absolute; the
 * parent directory is created), `redis://` / `rediss://`, `postgres://` / `postgresql://`. The
 * store driver (`@keyv/sqlite`, `@keyv/redis`, `@keyv/postgres`) is an optional package imported
 * here; the storage is pinged before it is returned, so an unreachable store fails now (a SQLite file
 * other processes keep locked is waited for, up to 30 s).
 */
export async function storageFromUrl(url: string, options: StoreUrlOptions = {}): Promise<Storage> {
  const started = Date.now()
  for (;;) {
    try {
      return await openStore(url, options)
    } catch (error) {
      // A SQLite file other processes keep busy past the busy timeout (a write lock held under load, or
      // several opening a new file at once) is tried again, for up to 30 s in all: starting is not failing.
      if ((error as { cause?: { code?: unknown } }).cause?.code !== 'SQLITE_BUSY' || Date.now() - started > SQLITE_OPEN_WAIT_MS)
        throw withoutPassword(error, url)
      await new Promise(resolve => setTimeout(resolve, 100 + Math.random() * 400))
    }
  }
}

/** How long storageFromUrl keeps trying to open a SQLite file that stays busy. */
const SQLITE_OPEN_WAIT_MS = 30_000

/** storageFromUrl's one attempt. */
async function openStore(url: string, options: StoreUrlOptions): Promise<Storage> {
  const scheme = schemeOf(url)
  const namespace = checkedNamespace(options.namespace ?? 'zapgate')
  const adapterOptions = options.adapterOptions ?? {}
  const storageOptions = { pingTimeoutMs: options.pingTimeoutMs, sweepIntervalMs: options.sweepIntervalMs }
  if (scheme === 'memory') return withReach(keyvStorage(undefined, storageOptions), 'process')

  let keyv: Keyv
  let setup: (() => Promise<unknown>) | undefined
  if (scheme === 'sqlite') {
    const path = url.slice('sqlite://'.length)
    if (!url.startsWith('sqlite://') || path === '') {
      throw new Error(`Invalid store URL "${url}": write sqlite://<file path>, e.g. sqlite://./data/gateway.sqlite`)
    }
    const { KeyvSqlite } = await importDriver(scheme, '@keyv/sqlite', () => import('@keyv/sqlite'))
    // It holds the devices' credentials: a folder the gateway creates is 0700, a file it creates 0600
    // (SQLite gives its -wal and -shm files the database's mode). Existing ones are left as they are.
    if (path !== ':memory:') await createPrivately(resolve(path))
    const store = new KeyvSqlite({ uri: `sqlite://${path}`, busyTimeout: 5000, iterationLimit: 500, ...adapterOptions })
    keyv = new Keyv(store, { namespace, ...JSON_SERIALIZER })
    // WAL: readers never wait for the writer, and a commit is one append to the log. FULL keeps
    // each commit durable across power loss (NORMAL would only survive a process crash).
    setup = () => store.query('PRAGMA journal_mode = WAL').then(() => store.query('PRAGMA synchronous = FULL'))
  } else if (scheme === 'redis' || scheme === 'rediss') {
    const { default: KeyvRedis, defaultReconnectStrategy } = await importDriver(scheme, '@keyv/redis', () => import('@keyv/redis'))
    // While the connection is down, commands fail at once instead of queueing (and hanging
    // requests) until Redis is back; the client keeps reconnecting in the background. The connect
    // time-out is the client's own: KeyvRedis's `connectionTimeout` leaves its timer running, which
    // kept a process alive 5 s after close().
    const client = { url, disableOfflineQueue: true, socket: { reconnectStrategy: defaultReconnectStrategy, connectTimeout: 5000 } }
    const store = new KeyvRedis(client, { namespace, throwOnErrors: true, ...adapterOptions })
    // KeyvRedis prefixes keys itself (`zapgate::key`); Keyv's own prefix would double it.
    keyv = new Keyv(store, { namespace, useKeyPrefix: false, ...JSON_SERIALIZER })
    setup = () => warnOfEviction(store, options.onWarning)
  } else if (scheme === 'postgres' || scheme === 'postgresql') {
    const { KeyvPostgres } = await importDriver(scheme, '@keyv/postgres', () => import('@keyv/postgres'))
    // Each storage has a pool of its own (KeyvPostgres alone shares one per process).
    const store = pooledPostgres(KeyvPostgres, { uri: url, iterationLimit: 500, ...adapterOptions }, options.pingTimeoutMs ?? 5000)
    keyv = new Keyv(store, { namespace, ...JSON_SERIALIZER })
  } else {
    throw new Error(
      `Unsupported store URL scheme "${scheme}:" in "${redactUrl(url)}": use memory://, sqlite://<path>, redis://, rediss://, postgres:// or postgresql://`,
    )
  }

  const storage = keyvStorage(keyv, storageOptions)
  try {
    await setup?.()
    await storage.ping!()
  } catch (error) {
    await storage.close!().catch(() => {})
    throw new Error(`Cannot open the store at ${redactUrl(url)}: ${messageOf(error)}`, { cause: error })
  }
  return withReach(storage, scheme === 'sqlite' ? 'host' : 'network')
}

/** Create the SQLite file's missing folders (0700) and, when it does not exist, the empty file (0600). */
async function createPrivately(path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 })
  try {
    await (await open(path, 'wx', 0o600)).close()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
}

/** The storage, telling how far it can be shared (memory: this process; SQLite: this host; Redis, PostgreSQL: any host). */
function withReach(storage: Storage, reach: NonNullable<Storage['reach']>): Storage {
  return Object.assign(storage, { reach })
}

/** The error thrown when a store URL needs an optional driver package that is not installed. */
export function missingPackageError(scheme: string, packageName: string, cause?: unknown): Error {
  return new Error(
    `GATEWAY_STORE=${scheme}://… needs the optional package ${packageName}: npm install ${packageName}`,
    cause === undefined ? undefined : { cause },
  )
}

// --- Internal helpers ---

const PING_KEY = '__zapgate_ping__'

/**
 * Plain JSON instead of Keyv's default serializer (@keyv/serialize): values are JSON-compatible, and
 * the native functions are about 3x faster (measured: ~2 µs instead of ~6-7 µs per in-memory op).
 */
const JSON_SERIALIZER = {
  serialize: JSON.stringify as Serialize,
  deserialize: JSON.parse as Deserialize,
}

function memoryKeyv(): Keyv {
  // A Map holding JSON strings: one stringify per set and one parse per get are the copies that keep
  // callers from mutating stored values; no namespace, the Map is ours alone.
  return new Keyv({ useKeyPrefix: false, ...JSON_SERIALIZER })
}

function schemeOf(url: string): string {
  const trimmed = url.trim()
  if (trimmed === '') return 'memory'
  const match = /^([a-z][a-z0-9+.-]*):/i.exec(trimmed)
  if (!match) throw new Error(`Invalid store URL "${redactUrl(url)}": expected <scheme>://…, e.g. sqlite://./data/gateway.sqlite`)
  return match[1].toLowerCase()
}

async function importDriver<M>(scheme: string, packageName: string, load: () => Promise<M>): Promise<M> {
  try {
    return await load()
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') throw missingPackageError(scheme, packageName, error)
    throw error
  }
}

/** A ttl in whole milliseconds (rounded up), or a RangeError for one that is not a positive number. */
function ttlOf(step: string, key: string, ttlMs: number | undefined): number | undefined {
  if (ttlMs !== undefined && !(Number.isFinite(ttlMs) && ttlMs > 0)) {
    throw new RangeError(`Storage ${step}(${JSON.stringify(key)}): ttlMs must be a positive number, got ${ttlMs}`)
  }
  return ttlMs === undefined ? undefined : Math.ceil(ttlMs)
}

async function attempt<T>(operation: string, key: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    throw failure(operation, key, error)
  }
}

function failure(operation: string, key: string, cause: unknown): Error {
  return new Error(`Storage ${operation}(${JSON.stringify(key)}) failed: ${messageOf(cause)}`, { cause })
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
