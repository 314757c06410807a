import { putBounded } from '../store/bounded-map.ts'

/** Levels below the limit: counts 1, 2-3, 4-7, ... 256 and more (a level per power of two). */
const COUNT_LEVELS = 9
/** The level of counters that reached their rule's points, after the count levels. */
const LIMITED = COUNT_LEVELS

/** A counter's count and when its window ends (ms since the epoch). */
interface Entry {
  count: number
  expires: number
}

/**
 * Counters held in this process's memory, bounded so that spraying made-up keys cannot push out the
 * count of a key that is being limited. Counters are kept in levels by count (1, 2-3, 4-7, ...), and
 * those that reached their rule's points in a level of their own; each level holds at most
 * `perLevel` counters and, when full, forgets its oldest (least recently counted). A fresh counter
 * only ever pushes out another fresh one: to push out a counter with n counts, a sprayer must bring
 * `perLevel` counters of its level, about `perLevel * n / 2` counts, and to push out one at its
 * limit, `perLevel` counters at their own limits.
 */
export class LocalCounters {
  private readonly levels = Array.from({ length: LIMITED + 1 }, () => new Map<string, Entry>())

  /** `perLevel`: the counters each level keeps (the bound in all is `perLevel` times 10). */
  constructor(private readonly perLevel: number) {}

  /** The count under `key` in its window; 0 when there is none or its window ended. */
  count(key: string): number {
    return this.find(key)?.entry.count ?? 0
  }

  /** Count one under `key` (whose window ends in `ttlMs` when it starts now) against a rule of `points`; answers the new count. */
  add(key: string, points: number, ttlMs: number): number {
    const found = this.find(key)
    found?.level.delete(key)
    const count = (found?.entry.count ?? 0) + 1
    const level = count >= points ? LIMITED : Math.min(COUNT_LEVELS - 1, 31 - Math.clz32(count))
    putBounded(this.levels[level]!, key, { count, expires: found?.entry.expires ?? Date.now() + ttlMs }, this.perLevel)
    return count
  }

  /** Counters held, expired ones included until they are read or pushed out. */
  get size(): number {
    return this.levels.reduce((sum, level) => sum + level.size, 0)
  }

  // --- Internal helpers ---

  /** The live counter under `key` and its level (an expired one is dropped). */
  private find(key: string): { entry: Entry; level: Map<string, Entry> } | undefined {
    for (const level of this.levels) {
      const entry = level.get(key)
      if (!entry) continue
      if (entry.expires > Date.now()) return { entry, level }
      level.delete(key)
      return undefined
    }
    return undefined
  }
}
