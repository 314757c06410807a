import { supportsAtomic, type AtomicStorage, type Storage } from '../ports/storage.ts'
import { jsonEqual } from './json-equal.ts'
import type { KeyedLock } from './keyed-lock.ts'
import { BoundedMap } from './bounded-map.ts'
import type { CacheEpoch } from './cache-epoch.ts'

/** Options of a collection. */
export interface CollectionOptions {
  /**
   * Keep records read for `ttlMs` in this process (hot lookups such as authkeys and devices on every
   * request). Writes through the collection refresh it at once; a change made by another process
   * sharing the store is seen within `ttlMs`. Cached records are frozen.
   */
  cache?: { ttlMs: number; maxEntries: number; epoch?: CacheEpoch }
}

/**
 * A typed collection of records over the storage port: records live under `<name>:<id>`.
 *
 * When the storage has the atomic steps, `create`, `replace`, `removeIfEqual` and `update` are
 * atomic across every process sharing the store (set-if-absent, compare-and-set, delete-if-equal);
 * the in-process lock stays as a fast path, so that one process's own updates of a record queue
 * instead of colliding. Without them, the same calls are serialised by the in-process lock only:
 * correct for a single process, as before.
 */
export class Collection<T> {
  private readonly cache?: BoundedMap<string, T>
  /** Writes so far: a read that overlapped a write does not fill the cache (it may hold the old value). */
  private writes = 0
  /** The storage when it has the atomic steps. */
  private readonly atomic?: AtomicStorage

  constructor(
    private readonly storage: Storage,
    private readonly lock: KeyedLock,
    readonly name: string,
    options: CollectionOptions = {},
  ) {
    if (options.cache && options.cache.ttlMs > 0) {
      this.cache = new BoundedMap(options.cache.maxEntries, options.cache.ttlMs)
      options.cache.epoch?.register(this)
    }
    if (supportsAtomic(storage)) this.atomic = storage
  }

  /** Whether writes are atomic across processes (the storage has the atomic steps). */
  get shared(): boolean {
    return this.atomic !== undefined
  }

  /** Storage key of a record. */
  key(id: string): string {
    return `${this.name}:${id}`
  }

  /**
   * The record when the cache holds it (frozen), else undefined: undefined says nothing about the
   * store, so a caller that gets it reads with get().
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
    return this.storage
      .get<T>(this.key(id))
      .then(value => (value === undefined || this.writes !== writesBefore ? value : this.cache!.set(id, deepFreeze(value))))
  }

  /** Run a write of record `id`, keeping the cache out of it: what was cached is dropped before and after. */
  private async written<R>(id: string, write: () => Promise<R>): Promise<R> {
    this.writes++
    this.cache?.delete(id)
    try {
      return await write()
    } finally {
      this.writes++
      this.cache?.delete(id)
    }
  }

  /** Drop every cached record (another process changed some); a read under way does not fill the cache. */
  forget(): void {
    this.writes++
    this.cache?.clear()
  }

  /** The record as stored now: from the store, never the cache (for a decision that must see the latest). */
  load(id: string): Promise<T | undefined> {
    return this.storage.get<T>(this.key(id))
  }

  /** Write a record (no lock: use for records created under a lock or owned by one writer). */
  put(id: string, value: T, ttlMs?: number): Promise<void> {
    return this.written(id, () => this.storage.set(this.key(id), value, ttlMs))
  }

  /** Remove a record; true when it existed. */
  remove(id: string): Promise<boolean> {
    return this.written(id, () => this.storage.delete(this.key(id)))
  }

  /**
   * Create a record only when there is none (an expired one counts as none): true when this call
   * created it, false when a record was there (left as it is). Of concurrent creates of one id, in
   * any number of processes sharing an atomic store, exactly one gets true.
   */
  create(id: string, value: T, ttlMs?: number): Promise<boolean> {
    const key = this.key(id)
    if (this.atomic) return this.written(id, () => this.atomic!.add(key, value, ttlMs))
    return this.lock.run(key, () =>
      this.written(id, async () => {
        if ((await this.storage.get(key)) !== undefined) return false
        await this.storage.set(key, value, ttlMs)
        return true
      }),
    )
  }

  /**
   * Replace a record only while it is still equal to `expected` (deep JSON equality; undefined:
   * only while there is none): true when this call replaced it, false when it had changed (nothing
   * written). Without `ttlMs` the record does not expire.
   */
  replace(id: string, expected: T | undefined, next: T, ttlMs?: number): Promise<boolean> {
    const key = this.key(id)
    if (this.atomic) return this.written(id, () => this.atomic!.compareAndSet(key, expected, next, ttlMs))
    return this.lock.run(key, () =>
      this.written(id, async () => {
        if (!sameRecord(await this.storage.get(key), expected)) return false
        await this.storage.set(key, next, ttlMs)
        return true
      }),
    )
  }

  /** Remove a record only while it is still equal to `expected`: true when this call removed it. */
  removeIfEqual(id: string, expected: T): Promise<boolean> {
    const key = this.key(id)
    if (this.atomic) return this.written(id, () => this.atomic!.deleteIfEqual(key, expected))
    return this.lock.run(key, () =>
      this.written(id, async () => {
        const current = await this.storage.get(key)
        return current !== undefined && jsonEqual(current, expected) && (await this.storage.delete(key))
      }),
    )
  }

  /**
   * Read-modify-write. `change` gets the current value (undefined when absent; a copy it may change)
   * and returns the new one, or undefined to leave the record as it is; resolves what was written,
   * or the current value when nothing was.
   *
   * With an atomic store this is an optimistic loop: the new value is written only if the record is
   * still the one `change` saw (compare-and-set), else `change` runs again on the newer record. So
   * `change` may run more than once: it must decide from its argument alone, and anything it
   * records outside must be set on every path (not only on the one that writes). Without atomic
   * steps it runs once, under the record's in-process lock (one process only). `ttlMs` makes what
   * is written expire (without it, it does not).
   */
  update(id: string, change: (current: T | undefined) => T | undefined | Promise<T | undefined>, ttlMs?: number): Promise<T | undefined> {
    const key = this.key(id)
    return this.lock.run(key, async () => {
      for (let attempt = 0; attempt < MAX_UPDATE_ATTEMPTS; attempt++) {
        // From the store, never the cache: the change must start from the latest record.
        const current = await this.storage.get<T>(key)
        // `change` gets its own copy, so the compare-and-set still compares with what was read.
        const next = await change(this.atomic && current !== undefined ? structuredClone(current) : current)
        if (next === undefined) return current
        if (!this.atomic) {
          await this.put(id, next, ttlMs)
          return next
        }
        if (await this.written(id, () => this.atomic!.compareAndSet(key, current, next, ttlMs))) return next
      }
      throw new Error(`update of ${key}: the record changed under ${MAX_UPDATE_ATTEMPTS} attempts in a row`)
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

/** An update that keeps losing its compare-and-set this often gives up (a guard against a livelock). */
const MAX_UPDATE_ATTEMPTS = 1000

/** Whether the stored record is the expected one (undefined: none). */
function sameRecord(current: unknown, expected: unknown): boolean {
  return expected === undefined ? current === undefined : current !== undefined && jsonEqual(current, expected)
}
