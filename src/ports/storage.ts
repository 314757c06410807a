/**
 * The storage port: a small async key-value store. The domain keeps its typed collections and
 * secondary indexes on top of it (see src/store/). Values are JSON-compatible; an adapter may
 * serialise them however it likes but must give back an equal value, and a copy: every write (`set`,
 * `add`, `compareAndSet`) keeps a copy of the caller's value and every read (`get`, `list`) gives one.
 *
 * Several gateway processes may share one store. Whatever another process must see is written with
 * one of the optional atomic steps below (`add`, `compareAndSet`, `deleteIfEqual`, `increment`),
 * each done by the backend itself in one step. A storage without them still works for a single
 * process; multi-process features call `requireAtomic` at start-up and refuse it.
 *
 * Words used by the atomic steps:
 * - *absent*: no entry under the key, or an entry whose ttl has passed (exactly the entries for
 *   which `get` answers undefined). A stored `null` is a live entry, as any other value.
 * - *equal*: deep JSON equality, judged on the JSON form of both values: the same JSON type; equal
 *   numbers, strings, booleans, null; arrays of the same length with equal items in order; objects
 *   with the same set of keys, in any order, and equal values (a property whose value is undefined
 *   is no key, as in JSON.stringify; an undefined array item is null). See `jsonEqual`.
 * - *losing a race* is a normal answer (`false`), never an error. A step that rejects (the store is
 *   unreachable, or did not answer in time) may or may not have happened: read the key to find out.
 */
export interface Storage {
  /** The value stored under `key`, or undefined when there is none (or it expired). */
  get<T = unknown>(key: string): Promise<T | undefined>
  /** Store `value` under `key`, replacing any value; `ttlMs` makes it expire. Resolves once durable. */
  set(key: string, value: unknown, ttlMs?: number): Promise<void>
  /** Remove `key`; resolves true when a live entry was removed, false when it was absent (an expired entry is absent: removed too, it answers false). */
  delete(key: string): Promise<boolean>
  /** Every entry whose key starts with `prefix`, in no particular order. */
  list<T = unknown>(prefix: string): AsyncIterable<[key: string, value: T]>
  /** Reachability probe for health checks; throws when the backing store is unreachable. */
  ping?(): Promise<void>
  /** Release connections. */
  close?(): Promise<void>
  /**
   * Where the store can be shared: `'process'` (memory), `'host'` (a file such as SQLite: processes
   * of one machine, one at a time for the gateway), `'network'` (Redis, PostgreSQL: any number of
   * instances on any hosts). Absent: unknown, taken as `'network'` when the store has the atomic steps.
   */
  readonly reach?: 'process' | 'host' | 'network'

  /**
   * Atomic set-if-absent: store `value` under `key` only when the key is absent (an expired entry
   * counts as absent and is replaced). Resolves true when this call stored it, false when a live
   * entry was there (left as it is). `ttlMs` makes the new entry expire, as in `set`. Of any number
   * of concurrent `add`s of one absent key, from any number of processes, exactly one resolves true.
   */
  add?(key: string, value: unknown, ttlMs?: number): Promise<boolean>
  /**
   * Atomic compare-and-set: replace the value under `key` with `next` only when the stored value
   * is still equal to `expected` (deep JSON equality, see above); `expected === undefined` means
   * "only when the key is absent" (then it is `add`). Resolves true when this call replaced it,
   * false otherwise (nothing changed). The new entry expires after `ttlMs`, or never without it
   * (as `set`, it drops an earlier ttl). `next` must not be undefined: use `deleteIfEqual`.
   * Of concurrent calls that expect the same value, exactly one resolves true.
   */
  compareAndSet?(key: string, expected: unknown, next: unknown, ttlMs?: number): Promise<boolean>
  /**
   * Atomic delete-if-equal: remove `key` only when its live value is equal to `expected` (deep JSON
   * equality; `expected` must not be undefined). Resolves true when this call removed it, false
   * when the key was absent or held another value (left as it is). Releases a claim only when it
   * is still the caller's.
   */
  deleteIfEqual?(key: string, expected: unknown): Promise<boolean>
  /**
   * Atomic counter: add `by` (a safe integer, may be negative) to the integer stored under `key`,
   * an absent key counting as 0, and resolve with the new value. When this call creates the entry
   * (the key was absent), `ttlMs` makes it expire; an existing entry keeps its expiry (so the first
   * increment starts a fixed window). Rejects, changing nothing, when the stored value is not a safe
   * integer, or when the sum would not be one (the counter stays as it was). N concurrent increments by 1 of one key end at exactly N, each resolving a distinct value.
   */
  increment?(key: string, by: number, ttlMs?: number): Promise<number>
}

/** The atomic steps a Storage needs for use by several processes at once. */
export const atomicSteps = ['add', 'compareAndSet', 'deleteIfEqual', 'increment'] as const

/** A Storage that has every atomic step. */
export type AtomicStorage = Storage & Required<Pick<Storage, (typeof atomicSteps)[number]>>

/** Whether `storage` has every atomic step (so it may be shared by several processes). */
export function supportsAtomic(storage: Storage): storage is AtomicStorage {
  return atomicSteps.every(step => typeof storage[step] === 'function')
}

/** Where `storage` can be shared: its `reach`, or when it does not say, `'network'` for a store with the atomic steps and `'process'` otherwise. */
export function reachOf(storage: Storage): NonNullable<Storage['reach']> {
  return storage.reach ?? (supportsAtomic(storage) ? 'network' : 'process')
}

/**
 * `storage` as an AtomicStorage, or a thrown Error naming `feature` and the steps it lacks. Features
 * that several processes share call it at start-up, so a store that cannot do them is refused at
 * once instead of producing duplicates later.
 */
export function requireAtomic(storage: Storage, feature: string): AtomicStorage {
  if (supportsAtomic(storage)) return storage
  const missing = atomicSteps.filter(step => typeof storage[step] !== 'function')
  throw new Error(
    `${feature} needs a storage with atomic steps, and this one lacks ${missing.join(', ')}: ` +
      'use the Keyv storage adapter with redis:// or postgres:// (or sqlite:// for processes on one host), ' +
      'or implement add, compareAndSet, deleteIfEqual and increment in your Storage (see the Storage port)',
  )
}

/**
 * A Storage view whose keys all live under `prefix` (used to give adapters a namespace of their own).
 * `refuseWrite`, asked synchronously as each write (set, delete and the atomic steps) is handed to
 * the store, may return an Error: that write then rejects with it and never reaches the store. Reads
 * and listings are never refused.
 */
export function prefixedStorage(storage: Storage, prefix: string, refuseWrite: () => Error | undefined = () => undefined): Storage {
  const write = <T>(step: () => Promise<T>): Promise<T> => {
    const refused = refuseWrite()
    return refused ? Promise.reject(refused) : step()
  }
  const view: Storage = {
    get: key => storage.get(prefix + key),
    set: (key, value, ttlMs) => write(() => storage.set(prefix + key, value, ttlMs)),
    delete: key => write(() => storage.delete(prefix + key)),
    async *list<T>(p: string): AsyncIterable<[string, T]> {
      for await (const [key, value] of storage.list<T>(prefix + p)) yield [key.slice(prefix.length), value]
    },
    ...(storage.reach ? { reach: storage.reach } : {}),
  }
  const { add, compareAndSet, deleteIfEqual, increment } = storage
  if (add) view.add = (key, value, ttlMs) => write(() => add.call(storage, prefix + key, value, ttlMs))
  if (compareAndSet) view.compareAndSet = (key, expected, next, ttlMs) => write(() => compareAndSet.call(storage, prefix + key, expected, next, ttlMs))
  if (deleteIfEqual) view.deleteIfEqual = (key, expected) => write(() => deleteIfEqual.call(storage, prefix + key, expected))
  if (increment) view.increment = (key, by, ttlMs) => write(() => increment.call(storage, prefix + key, by, ttlMs))
  return view
}
