/** Set `key` (moving it to the newest position) and drop the oldest entries past `limit`, read from one iterator kept per map. */
export function putBounded<K, V>(map: Map<K, V>, key: K, value: V, limit: number, onEvict?: (key: K, value: V) => void): void {
  map.delete(key)
  map.set(key, value)
  let kept = evictionCursors.get(map)
  // Let go after `limit` puts that evict nothing: an iterator left unmoved holds every table the Map was rehashed out of since (without bound while it churns at its limit); a new one walks the deleted slots once.
  if (map.size <= limit) return void (kept && ++kept.idle > limit && evictionCursors.delete(map))
  while (map.size > limit) {
    let oldest = kept?.cursor.next()
    if (!oldest || oldest.done) (evictionCursors.set(map, (kept = { cursor: map.entries(), idle: 0 })), (oldest = kept.cursor.next()))
    kept!.idle = 0
    const [oldKey, oldValue] = oldest.value as [K, V]
    map.delete(oldKey)
    onEvict?.(oldKey, oldValue)
  }
}

const evictionCursors = new WeakMap<Map<unknown, unknown>, { cursor: Iterator<[unknown, unknown]>; idle: number }>()

/** A Map with a size bound (the oldest entry goes first) and an optional time-to-live (an expired entry reads as missing). */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, { value: V; expires: number }>()

  constructor(
    private readonly limit: number,
    private readonly ttlMs = Infinity,
  ) {}

  /** The value under `key`, or undefined when absent or expired. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key)
    if (entry && entry.expires > Date.now()) return entry.value
    this.entries.delete(key)
    return undefined
  }

  has(key: K): boolean {
    return this.get(key) !== undefined
  }

  /** Store `value` as the newest entry (`ttlMs` overrides the default); answers `value`. */
  set(key: K, value: V, ttlMs = this.ttlMs): V {
    putBounded(this.entries, key, { value, expires: Date.now() + ttlMs }, this.limit)
    return value
  }

  delete(key: K): void {
    this.entries.delete(key)
  }

  clear(): void {
    this.entries.clear()
  }

  /** Entries held, expired ones included until they are read. */
  get size(): number {
    return this.entries.size
  }
}
