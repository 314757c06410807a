import { supportsAtomic, type Storage } from '../ports/storage.ts'
import type { KeyedLock } from './keyed-lock.ts'

/**
 * Counters in the store (`<name>:<id>`): the storage's atomic increment when it has one, so that every
 * process sharing the store counts together; otherwise a read and a write under the in-process lock
 * (one process). A counter that reaches zero is removed.
 */
export class Counters {
  constructor(
    private readonly storage: Storage,
    private readonly lock: KeyedLock,
    private readonly name: string,
  ) {}

  /** Add `by` (negative to take away) to the counter `id`; resolves with its new value. */
  async add(id: string, by: number): Promise<number> {
    const key = `${this.name}:${id}`
    if (supportsAtomic(this.storage)) {
      const value = await this.storage.increment(key, by)
      if (value <= 0 && by < 0) await this.storage.deleteIfEqual(key, value)
      return value
    }
    return this.lock.run(key, async () => {
      const value = ((await this.storage.get<number>(key)) ?? 0) + by
      if (value <= 0) await this.storage.delete(key)
      else await this.storage.set(key, value)
      return value
    })
  }

  /** The counter's value (0 when there is none). */
  async value(id: string): Promise<number> {
    return (await this.storage.get<number>(`${this.name}:${id}`)) ?? 0
  }
}
