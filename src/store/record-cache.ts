import { putBounded } from './bounded-map.ts'

/**
 * Recently read records of one collection, kept for `ttlMs` (at most `maxEntries`, oldest dropped
 * first). Cached values are deep-frozen: a caller that tried to change one would throw instead of
 * silently changing what the next request reads.
 */
export class RecordCache<T> {
  private readonly entries = new Map<string, { value: T; expiresAt: number }>()

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
  ) {}

  /** The cached value, or undefined when absent or expired. */
  get(id: string): T | undefined {
    const entry = this.entries.get(id)
    if (!entry) return undefined
    if (entry.expiresAt <= Date.now()) {
      this.entries.delete(id)
      return undefined
    }
    return entry.value
  }

  /** Remember `value` (frozen in place) for ttlMs; answers it. */
  set(id: string, value: T): T {
    putBounded(this.entries, id, { value: deepFreeze(value), expiresAt: Date.now() + this.ttlMs }, this.maxEntries)
    return value
  }

  /** Forget `id` (it was written or removed). */
  delete(id: string): void {
    this.entries.delete(id)
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const child of Object.values(value)) deepFreeze(child)
  }
  return value
}
