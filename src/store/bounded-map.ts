/**
 * Set `key` (moving it to the newest position) and drop the oldest entries past `limit`.
 *
 * The oldest entry comes from one live iterator kept per map: a fresh `map.entries().next()` walks
 * over every slot deleted since V8 last compacted the table (about a microsecond per call on a full
 * map of 2,000). Everything before the kept iterator's position has been evicted through it and
 * entries are only ever appended, so what it yields next is always the oldest entry.
 */
export function putBounded<K, V>(map: Map<K, V>, key: K, value: V, limit: number, onEvict?: (key: K, value: V) => void): void {
  map.delete(key)
  map.set(key, value)
  while (map.size > limit) {
    let oldest = evictionCursors.get(map)?.next()
    if (!oldest || oldest.done) {
      const cursor = map.entries()
      evictionCursors.set(map, cursor)
      oldest = cursor.next()
    }
    const [oldKey, oldValue] = oldest.value as [K, V]
    map.delete(oldKey)
    onEvict?.(oldKey, oldValue)
  }
}

/** The eviction iterator of each bounded map (see putBounded). */
const evictionCursors = new WeakMap<Map<unknown, unknown>, Iterator<[unknown, unknown]>>()
