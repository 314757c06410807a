import type { Storage } from '../ports/storage.ts'
import type { KeyedLock } from './keyed-lock.ts'

/**
 * A typed collection of records over the storage port: records live under `<name>:<id>`. Updates of
 * one record are serialised through the shared lock, so two concurrent updates both land.
 */
export class Collection<T> {
  constructor(
    private readonly storage: Storage,
    private readonly lock: KeyedLock,
    readonly name: string,
  ) {}

  /** Storage key of a record. */
  key(id: string): string {
    return `${this.name}:${id}`
  }

  /** The record, or undefined. */
  get(id: string): Promise<T | undefined> {
    return this.storage.get<T>(this.key(id))
  }

  /** Write a record (no lock: use for records created under a lock or owned by one writer). */
  put(id: string, value: T, ttlMs?: number): Promise<void> {
    return this.storage.set(this.key(id), value, ttlMs)
  }

  /** Remove a record; true when it existed. */
  remove(id: string): Promise<boolean> {
    return this.storage.delete(this.key(id))
  }

  /**
   * Read-modify-write under the record's lock. `change` gets the current value (undefined when
   * absent) and returns the new one, or undefined to leave the record as it is.
   */
  update(id: string, change: (current: T | undefined) => T | undefined | Promise<T | undefined>): Promise<T | undefined> {
    return this.lock.run(this.key(id), async () => {
      const current = await this.get(id)
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
