import { randomBytes } from 'node:crypto'
import type { Storage } from '../ports/storage.ts'

/** Options of storageContract. */
export interface StorageContractOptions {
  /**
   * Whether the storage has the atomic steps (add, compareAndSet, deleteIfEqual, increment). Default
   * true: their tests run, and a storage without them fails. Pass false for a storage meant for one
   * process only: then one test checks that it has none of them (so requireAtomic refuses it).
   */
  atomic?: boolean
  /**
   * Another Storage object on the same backend as `first`: a second connection (for SQLite, a
   * second connection to the same file; for an in-process store, a second view on the same data).
   * The race tests split their contenders between the two. Default: `first` itself.
   */
  connectAgain?: (first: Storage) => Promise<Storage>
  /**
   * Whether the storage has `ping()`, the reachability probe of `GET /health`. Default true: the
   * contract requires it and checks that it resolves while the store is reachable. Pass false for a
   * storage that has nothing to probe (the health check then counts the store as reachable without
   * asking it): the contract checks that it has no `ping`.
   */
  ping?: boolean
}

/** What each contract test gets: the storage, a second one on the same backend, and a key maker. */
interface ContractScope {
  storage: Storage
  /** A second Storage object on the same backend (made on first use). */
  second(): Promise<Storage>
  /** A key under this test's own random prefix. */
  key(name: string): string
}

/**
 * Run `body` with a fresh storage (and, when asked, a second one on the same backend) whose keys
 * live under a random prefix; whatever the test wrote is deleted and both storages are closed after.
 */
export async function withStorage(
  makeStorage: () => Promise<Storage>,
  options: StorageContractOptions,
  body: (scope: ContractScope) => Promise<void>,
): Promise<void> {
  const storage = await makeStorage()
  const prefix = `contract-${randomBytes(6).toString('hex')}:`
  const written = new Set<string>()
  let second: Promise<Storage> | undefined
  try {
    await body({
      storage: recording(storage, written),
      second: async () => recording(await (second ??= options.connectAgain?.(storage) ?? Promise.resolve(storage)), written),
      key: name => prefix + name,
    })
  } finally {
    try {
      await Promise.all([...written].map(key => storage.delete(key)))
    } finally {
      const other = second && (await second.catch(() => undefined))
      await Promise.all([storage.close?.(), other && other !== storage ? other.close?.() : undefined])
    }
  }
}

/** The entries under `prefix`, sorted by key. */
export async function collect(storage: Storage, prefix: string): Promise<Array<[string, unknown]>> {
  const entries: Array<[string, unknown]> = []
  for await (const entry of storage.list(prefix)) entries.push(entry)
  return entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
}

/** Resolve after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, ms))
}

// --- Internal helpers ---

/** `storage` with every write's key noted in `written` (deleted after the test); `close` is the caller's. */
function recording(storage: Storage, written: Set<string>): Storage {
  const note = (key: string) => written.add(key)
  const view: Storage = {
    get: key => storage.get(key),
    set: (key, value, ttlMs) => (note(key), storage.set(key, value, ttlMs)),
    delete: key => storage.delete(key),
    list: prefix => storage.list(prefix),
  }
  if (storage.ping) view.ping = () => storage.ping!()
  if (storage.add) view.add = (key, value, ttlMs) => (note(key), storage.add!(key, value, ttlMs))
  if (storage.compareAndSet) view.compareAndSet = (key, expected, next, ttlMs) => (note(key), storage.compareAndSet!(key, expected, next, ttlMs))
  if (storage.deleteIfEqual) view.deleteIfEqual = (key, expected) => storage.deleteIfEqual!(key, expected)
  if (storage.increment) view.increment = (key, by, ttlMs) => (note(key), storage.increment!(key, by, ttlMs))
  return view
}
