import type { Storage } from '../ports/storage.ts'
import { Collection, type CollectionOptions } from './collection.ts'
import { jsonEqual } from './json-equal.ts'
import type { KeyedLock } from './keyed-lock.ts'

/**
 * A uniqueness rule ("device name unique within its account"): each value belongs to at most one
 * owner, an entry `<name>:<value>` claimed with set-if-absent and released with delete-if-equal.
 */
export class UniqueIndex<Owner> {
  private readonly entries: Collection<Owner>

  constructor(storage: Storage, lock: KeyedLock, name: string, options: CollectionOptions = {}) {
    this.entries = new Collection(storage, lock, name, options)
  }

  /** Storage key of a value's entry. */
  key(value: string): string {
    return this.entries.key(value)
  }

  /** The owner of `value`, or undefined (from the cache, when the index has one). */
  owner(value: string): Promise<Owner | undefined> {
    return this.entries.get(value)
  }

  /** The owner when the cache holds it, else undefined (which says nothing: ask owner()). */
  peek(value: string): Owner | undefined {
    return this.entries.peek(value)
  }

  /** Claim `value` for `owner`: true when it now belongs to `owner` (an equal owner's claim too), false when another holds it. */
  async claim(value: string, owner: Owner, ttlMs?: number): Promise<boolean> {
    for (;;) {
      if (await this.entries.create(value, owner, ttlMs)) return true
      const holder = await this.entries.load(value)
      if (holder !== undefined) return jsonEqual(holder, owner)
    }
  }

  /** Release `value` if `owner` still holds it: true when released, false when it is not (or no longer) theirs. */
  release(value: string, owner: Owner): Promise<boolean> {
    return this.entries.removeIfEqual(value, owner)
  }

  /** Hand `value` from `from` to `to` only while `from` holds it: true when handed over. */
  transfer(value: string, from: Owner, to: Owner): Promise<boolean> {
    return this.entries.replace(value, from, to)
  }

  /** Every entry of the index (a scan: for start-up, clean-up and rare listings only). */
  all(): AsyncIterable<[value: string, owner: Owner]> {
    return this.entries.all()
  }

  /** Entries whose value starts with `valuePrefix` (e.g. every name of one account). */
  withPrefix(valuePrefix: string): AsyncIterable<[value: string, owner: Owner]> {
    return this.entries.withPrefix(valuePrefix)
  }
}
