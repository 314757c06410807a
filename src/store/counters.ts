import type { Storage } from '../ports/storage.ts'
import { atomicSteps } from './keyed-lock.ts'

/** Counters in the store (`<name>:<id>`), counted with the atomic increment; a counter that reaches zero is removed. */
export class Counters {
  constructor(
    private readonly storage: Storage,
    private readonly name: string,
  ) {}

  /** Add `by` (negative to take away) to the counter `id`; resolves with its new value. */
  async add(id: string, by: number): Promise<number> {
    const key = `${this.name}:${id}`
    const steps = atomicSteps(this.storage)
    const value = await steps.increment(key, by)
    if (value <= 0 && by < 0) await steps.deleteIfEqual(key, value)
    return value
  }
}
