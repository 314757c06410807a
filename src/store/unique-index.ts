import { Collection } from './collection.ts'
import { jsonEqual } from './json-equal.ts'

/** A uniqueness rule ("device name unique within its account"): the entry `<name>:<value>` names each value's one owner. */
export class UniqueIndex<Owner> extends Collection<Owner> {
  /** Claim `value` for `owner`: true when it now belongs to `owner` (an equal owner's claim too), false when another holds it. */
  async claim(value: string, owner: Owner, ttlMs?: number): Promise<boolean> {
    for (;;) {
      if (await this.create(value, owner, ttlMs)) return true
      const holder = await this.load(value)
      if (holder !== undefined) return jsonEqual(holder, owner)
    }
  }
}
