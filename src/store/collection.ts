import { supportsAtomic, type Storage } from '../ports/storage.ts'
import { atomicSteps, type KeyedLock } from './keyed-lock.ts'
import { BoundedMap } from './bounded-map.ts'
import type { CacheEpoch } from './cache-epoch.ts'

/** Typed records under `<name>:<id>`, written by the storage's atomic steps (truth in the store; the record lock is a fast path). */
export class Collection<T> {
  private readonly cache?: BoundedMap<string, T>
  /** Writes so far: a read that overlapped a write does not fill the cache (it may hold the old value). */
  private writes = 0
  private readonly atomic: ReturnType<typeof atomicSteps>

  constructor(
    private readonly storage: Storage,
    private readonly lock: KeyedLock,
    readonly name: string,
    /** `cache`: keep records read for `ttlMs` in this process (frozen); writes through the collection refresh it at once. */
    options: { cache?: { ttlMs: number; maxEntries: number; epoch?: CacheEpoch } } = {},
  ) {
    if (options.cache && options.cache.ttlMs > 0) {
      this.cache = new BoundedMap(options.cache.maxEntries, options.cache.ttlMs)
      options.cache.epoch?.register(this)
    }
    this.atomic = atomicSteps(storage)
  }

  /** Whether writes are atomic across processes (the storage has the atomic steps). */
  get shared(): boolean {
    return supportsAtomic(this.storage)
  }

  key(id: string): string {
    return `${this.name}:${id}`
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

  /** The record if this process has it cached, without a store read (undefined: not cached). */
  peek(id: string): T | undefined {
    return this.cache?.get(id)
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

  /** Create a record only when there is none (an expired one counts as none): true when this call created it. */
  create(id: string, value: T, ttlMs?: number): Promise<boolean> {
    return this.written(id, () => this.atomic.add(this.key(id), value, ttlMs))
  }

  /** Replace a record only while it is still equal to `expected` (deep JSON equality; undefined: while there is none): true when replaced. */
  replace(id: string, expected: T | undefined, next: T, ttlMs?: number): Promise<boolean> {
    return this.written(id, () => this.atomic.compareAndSet(this.key(id), expected, next, ttlMs))
  }

  /** Remove a record only while it is still equal to `expected`: true when this call removed it. */
  removeIfEqual(id: string, expected: T): Promise<boolean> {
    return this.written(id, () => this.atomic.deleteIfEqual(this.key(id), expected))
  }

  /** Compare-and-set: `change` (may run more than once, so it decides from its argument alone) returns the next value or undefined; resolves what is stored. */
  update(id: string, change: (current: T | undefined) => T | undefined | Promise<T | undefined>, ttlMs?: number): Promise<T | undefined> {
    const key = this.key(id)
    return this.lock.run(key, async () => {
      for (let attempt = 0; attempt < MAX_UPDATE_ATTEMPTS; attempt++) {
        const current = await this.storage.get<T>(key)
        const next = await change(current === undefined ? current : structuredClone(current))
        if (next === undefined) return current
        if (await this.written(id, () => this.atomic.compareAndSet(key, current, next, ttlMs))) return next
      }
      throw new Error(`update of ${key}: the record changed under ${MAX_UPDATE_ATTEMPTS} attempts in a row`)
    })
  }

  /** Every record of the collection (a scan: for start-up and rare listings only). */
  all(): AsyncIterable<[id: string, value: T]> {
    return this.withPrefix('')
  }

  /** Records whose id starts with `idPrefix`. */
  async *withPrefix(idPrefix: string): AsyncIterable<[id: string, value: T]> {
    const prefix = `${this.name}:`
    for await (const [key, value] of this.storage.list<T>(prefix + idPrefix)) yield [key.slice(prefix.length), value]
  }

  /** Remove every record whose id starts with `idPrefix`, each as it is listed (a scan; the adapters' listings miss none removed meanwhile); resolves how many were removed. */
  async removeWithPrefix(idPrefix: string): Promise<number> {
    let removed = 0
    for await (const [id] of this.withPrefix(idPrefix)) removed += Number(await this.remove(id))
    return removed
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
}

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
