import { Collection } from './collection.ts'
import { jsonEqual } from './json-equal.ts'

/**
 * A uniqueness rule ("device name unique within its account"): a collection whose entry
 * `<name>:<value>` names the one owner of each value, claimed with set-if-absent (`claim`),
 * released with `removeIfEqual` and handed over with `replace` (both only while the owner holds it).
 */
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
