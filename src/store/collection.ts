import type { Storage } from '../ports/storage.ts'
import type { KeyedLock } from './keyed-lock.ts'
import { BoundedMap } from './bounded-map.ts'

/** Options of a collection. */
export interface CollectionOptions {
  /**
   * Keep records read for `ttlMs` in this process (hot lookups such as authkeys and devices on every
   * request). Writes through the collection refresh it at once; a change made by another process
   * sharing the store is seen within `ttlMs`. Cached records are frozen.
   */
  cache?: { ttlMs: number; maxEntries: number }
}

/**
 * A typed collection of records over the storage port: records live under `<name>:<id>`. Updates of
 * one record are serialised through the shared lock, so two concurrent updates both land.
 */
export class Collection<T> {
  private readonly cache?: BoundedMap<string, T>
  /** Writes so far: a read that overlapped a write does not fill the cache (it may hold the old value). */
  private writes = 0

  constructor(
    private readonly storage: Storage,
    private readonly lock: KeyedLock,
    readonly name: string,
    options: CollectionOptions = {},
  ) {
    if (options.cache && options.cache.ttlMs > 0) this.cache = new BoundedMap(options.cache.maxEntries, options.cache.ttlMs)
  }

  /** Storage key of a record. */
  key(id: string): string {
    return `${this.name}:${id}`
  }

  /**
   * The record when the cache holds it (frozen), else undefined: undefined says nothing about the
   * store, so a caller that gets it reads with get(). Lets a hot path answer without a promise.
   */
  peek(id: string): T | undefined {
    return this.cache?.get(id)
  }

  /** The record, or undefined (from the cache, when the collection has one; then frozen). */
  get(id: string): Promise<T | undefined> {
    if (!this.cache) return this.storage.get<T>(this.key(id))
    const cached = this.cache.get(id)
    if (cached !== undefined) return Promise.resolve(cached)
    const writesBefore = this.writes
    return this.storage.get<T>(this.key(id)).then(value => (value === undefined || this.writes !== writesBefore ? value : this.cache!.set(id, deepFreeze(value))))
  }

  /** Write a record (no lock: use for records created under a lock or owned by one writer). */
  async put(id: string, value: T, ttlMs?: number): Promise<void> {
    this.writes++
    this.cache?.delete(id)
    try {
      await this.storage.set(this.key(id), value, ttlMs)
    } finally {
      this.writes++
      this.cache?.delete(id)
    }
  }

  /** Remove a record; true when it existed. */
  async remove(id: string): Promise<boolean> {
    this.writes++
    this.cache?.delete(id)
    try {
      return await this.storage.delete(this.key(id))
    } finally {
      this.writes++
      this.cache?.delete(id)
    }
  }

  /**
   * Read-modify-write under the record's lock. `change` gets the current value (undefined when
   * absent) and returns the new one, or undefined to leave the record as it is.
   */
  update(id: string, change: (current: T | undefined) => T | undefined | Promise<T | undefined>): Promise<T | undefined> {
    return this.lock.run(this.key(id), async () => {
      // From the store, never the cache: the change must start from the latest record.
      const current = await this.storage.get<T>(this.key(id))
      const next = await change(current)
      if (next !== undefined) await this.put(id, next)
      return next ?? current
    })
  }

  /** Every record of the collection (a scan: for start-up and rare listings only). */
  async *all(): AsyncIterable<[id: string, value: T]> {
    const prefix = `${this.name}:`
    for await (const [key, value] of this.storage.list<T>(prefix)) yield [key.slice(prefix.length), value]
  }

  /** Records whose id starts with `idPrefix`. */
  async *withPrefix(idPrefix: string): AsyncIterable<[id: string, value: T]> {
    const prefix = `${this.name}:`
    for await (const [key, value] of this.storage.list<T>(prefix + idPrefix)) yield [key.slice(prefix.length), value]
  }
}

// --- Internal helpers ---

/** Freeze a record read into the cache, so a caller that tried to change it throws instead of changing what the next request reads. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const child of Object.values(value)) deepFreeze(child)
  }
  return value
}
