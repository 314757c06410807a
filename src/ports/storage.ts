/**
 * The storage port: a small async key-value store. The domain keeps its typed collections and
 * secondary indexes on top of it (see src/store/). Values are JSON-compatible; an adapter may
 * serialise them however it likes but must give back an equal value.
 */
export interface Storage {
  /** The value stored under `key`, or undefined when there is none (or it expired). */
  get<T = unknown>(key: string): Promise<T | undefined>
  /** Store `value` under `key`, replacing any value; `ttlMs` makes it expire. Resolves once durable. */
  set(key: string, value: unknown, ttlMs?: number): Promise<void>
  /** Remove `key`; resolves true when something was removed. */
  delete(key: string): Promise<boolean>
  /** Every entry whose key starts with `prefix`, in no particular order. */
  list<T = unknown>(prefix: string): AsyncIterable<[key: string, value: T]>
  /** Reachability probe for health checks; throws when the backing store is unreachable. */
  ping?(): Promise<void>
  /** Release connections. */
  close?(): Promise<void>
}

/** A Storage view whose keys all live under `prefix` (used to give adapters a namespace of their own). */
export function prefixedStorage(storage: Storage, prefix: string): Storage {
  return {
    get: key => storage.get(prefix + key),
    set: (key, value, ttlMs) => storage.set(prefix + key, value, ttlMs),
    delete: key => storage.delete(prefix + key),
    async *list<T>(p: string): AsyncIterable<[string, T]> {
      for await (const [key, value] of storage.list<T>(prefix + p)) yield [key.slice(prefix.length), value]
    },
  }
}
